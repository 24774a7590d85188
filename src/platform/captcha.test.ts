import assert from 'node:assert/strict';
import { test } from 'node:test';
import { captchaTestAnswerWarning } from './captcha.js';

test('CAPTCHA_TEST_ANSWER outside NODE_ENV=test is an error in the start log; under test a warning', () => {
  assert.equal(captchaTestAnswerWarning(undefined, undefined), undefined);
  assert.equal(captchaTestAnswerWarning('abc', 'test')?.level, 'warn');
  for (const env of [undefined, 'production', 'development']) {
    const said = captchaTestAnswerWarning('abc', env);
    assert.equal(said?.level, 'error');
    assert.match(said?.message ?? '', /outside NODE_ENV=test/);
    assert.ok(!said?.message.includes('abc'), 'the value is not logged');
  }
});
