export { idcardcheckRoutes } from './idcardcheck.routes.js';
