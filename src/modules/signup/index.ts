import { defineArea } from '../../platform/area.js';
import { CaptchaService as Captchas } from './captcha.service.js';
import { RecoveryService as Recovery } from './recovery.service.js';
import { signupRoutes as routes } from './signup.routes.js';
import { SignupService as Signup } from './signup.service.js';

export { CAPTCHA_LIFETIME, CaptchaService } from './captcha.service.js';
export { RecoveryService } from './recovery.service.js';
export { signupRoutes } from './signup.routes.js';
export { SignupService } from './signup.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly captchas: Captchas;
    readonly signup: Signup;
    readonly recovery: Recovery;
  }
}

/** Spec "Session and sign-up": captcha, verification, sign-up and password recovery. */
export const signupArea = defineArea({
  name: 'signup',
  create: (s, { config, database, clock }) => {
    const captchas = new Captchas(s.writer, config, s.throttle, clock);
    const signup = new Signup({
      clock,
      db: database.db,
      writer: s.writer,
      users: s.users,
      partners: s.partners,
      sessions: s.sessions,
      hardwareCodes: s.hardwareCodes,
      mailer: s.mailer,
      captchas,
      throttle: s.throttle,
    });
    const recovery = new Recovery({
      users: s.users,
      sessions: s.sessions,
      mailer: s.mailer,
      captchas,
      throttle: s.throttle,
    });
    return { captchas, signup, recovery };
  },
  routes: (app, s) => routes(app, s),
});
