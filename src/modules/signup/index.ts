export { CAPTCHA_LIFETIME, CaptchaService } from './captcha.service.js';
export { RecoveryService } from './recovery.service.js';
export { signupRoutes } from './signup.routes.js';
export { SignupService } from './signup.service.js';
