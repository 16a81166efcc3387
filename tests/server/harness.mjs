// What the JavaScript tests of `eagle2 serve` share: finding the npm packages that
// scripts/install-test-deps.sh installed (or skipping, with the installer's reason, where it could
// not), starting the server on a free port, and stopping it with SIGTERM.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const npmDir = path.join(repoRoot, "tests", "npm");
const installFailed = path.join(npmDir, "install-failed");

// CTest reads exit code 77 as "skipped" (SKIP_RETURN_CODE); the message says why.
export const SKIP = 77;

export function skip(why) {
  console.log(`SKIP: ${why}`);
  process.exit(SKIP);
}

// The installer's own words for what it could not install, if anything.
function installerReason() {
  if (!fs.existsSync(installFailed)) return "";
  return fs.readFileSync(installFailed, "utf8").trim().replace(/\n/g, "; ");
}

function skipNotInstalled(what) {
  const reason = installerReason();
  skip(`${what} is not installed: ` +
       (reason ? `scripts/install-test-deps.sh said: ${reason}`
               : "run scripts/install-test-deps.sh (scripts/test.sh does)"));
}

// Loads an npm package from tests/npm/node_modules, or skips when it is not there.
export function requirePackage(name) {
  const require = createRequire(path.join(npmDir, "package.json"));
  try {
    require.resolve(name);
  } catch {
    skipNotInstalled(`npm package ${name}`);
  }
  return require(name);
}

// Debian's chromium, or skips when it is not installed.
export function chromiumPath() {
  for (const p of [process.env.CHROMIUM, "/usr/bin/chromium"]) {
    if (p && fs.existsSync(p)) return p;
  }
  skipNotInstalled("chromium");
}

export function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
}

export function check(ok, message) {
  if (!ok) fail(message);
}

export function checkEqual(actual, expected, what) {
  if (actual !== expected) {
    fail(`${what}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }
}

export const bundledModel = path.join(repoRoot, "models", "code-lm");
export const bundledHead = path.join(repoRoot, "models", "code-lm-eagle");

// The shared data folder, found as tests/support/shared_data.cpp finds it: $EAGLE2_SHARED, else
// ../shared beside the repository. "" when absent.
export function sharedDir() {
  const env = process.env.EAGLE2_SHARED;
  if (env) return fs.existsSync(env) ? env : "";
  const p = path.join(repoRoot, "..", "shared");
  return fs.existsSync(p) ? p : "";
}

// `eagle2 generate` on the bundled model (plain greedy decoding): the text it prints after the
// prompt (its stdout is the prompt, the completion and one newline) and the token counts of its
// stats line.
export function generateRun(eagle2, prompt, nPredict) {
  const r = spawnSync(eagle2, ["generate", "-m", bundledModel, "-p", prompt, "-n", String(nPredict)],
                      { encoding: "utf8" });
  check(r.status === 0, `eagle2 generate failed (${r.status}): ${r.stderr}`);
  check(r.stdout.startsWith(prompt) && r.stdout.endsWith("\n"),
        `generate printed ${JSON.stringify(r.stdout)}, not the prompt, the text and a newline`);
  const stats = r.stderr.match(/prompt (\d+) tokens.*decode (\d+) tokens/);
  check(stats, `no token counts in generate's stats: ${r.stderr}`);
  return { text: r.stdout.slice(prompt.length, -1), promptTokens: Number(stats[1]),
           tokens: Number(stats[2]) };
}

// Starts `eagle2 serve` on a free port (--port 0) and resolves once its "listening on" line names
// the port. Resolves to {url, port, stop()}; stop() sends SIGTERM and resolves to the exit code.
export function startServer(eagle2, extraArgs = [], { startTimeoutMs = 120000 } = {}) {
  const args = ["serve", "-m", bundledModel, "--draft", bundledHead, "--port", "0", ...extraArgs];
  const child = spawn(eagle2, args, { stdio: ["ignore", "inherit", "pipe"] });
  // The server must not outlive a failing test.
  const killOnExit = () => child.kill("SIGKILL");
  process.on("exit", killOnExit);
  let stderr = "";
  let listening = false;
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      process.off("exit", killOnExit);
      resolve(signal ? `signal ${signal}` : code);
    });
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`eagle2 serve did not print its port within ${startTimeoutMs} ms:\n${stderr}`));
    }, startTimeoutMs);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (data) => {
      process.stderr.write(data);  // the server's log belongs in the test's log
      stderr += data;
      const m = stderr.match(/eagle2 serve: listening on (http:\/\/[^\s:]+:(\d+))/);
      if (m && !listening) {
        listening = true;
        clearTimeout(timer);
        const port = Number(m[2]);
        resolve({
          url: m[1],
          port,
          stop: async () => {
            child.kill("SIGTERM");
            return exited;
          },
          stderr: () => stderr,
        });
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`eagle2 serve exited (${code}) before listening:\n${stderr}`));
    });
  });
}

// Runs main() and turns its outcome into the process's exit code; failures print their reason.
export function runTest(main) {
  main().then(
    () => {
      if (!process.exitCode) console.log("PASS");
    },
    (err) => {
      if (!process.exitCode) console.error(`FAIL: ${err && err.stack ? err.stack : err}`);
      process.exitCode = 1;
    },
  ).finally(() => process.exit(process.exitCode ?? 0));
}
