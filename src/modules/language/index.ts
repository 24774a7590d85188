export { languageRoutes } from './language.routes.js';
