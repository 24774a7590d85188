/** `npm start`: one Zentrale node with the settings of the environment (decisions.md). */
import { buildApp } from './app.js';
import { captchaTestAnswerWarning } from './platform/captcha.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { createLogger } from './platform/server.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`zentrale: configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const log = createLogger(config);
  const captcha = captchaTestAnswerWarning(config.captchaTestAnswer, process.env.NODE_ENV);
  if (captcha) log[captcha.level](captcha.message);
  const app = await buildApp(config, log);
  await app.server.listen({ port: config.port, host: config.host });
  const database = config.databaseUrl ? 'PostgreSQL' : `SQLite in ${config.dataDir}`;
  log.info(
    `Zentrale serves the API at ${config.publicUrl} (listening on ${config.host}:${config.port}, ${database})`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: finishing calls in flight and stopping`);
    // A bounded drain: calls still in flight after SHUTDOWN_TIMEOUT lose their connections,
    // then the queues are saved as usual.
    setTimeout(() => {
      log.warn('calls still in flight at the shutdown timeout: closing their connections');
      app.server.server.closeAllConnections();
    }, config.shutdownTimeout * 1000).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `zentrale: could not start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
