#!/usr/bin/env node
// npm's `prepare`: compiles src/ into dist/ (JavaScript and .d.ts).
//
// `npm install <this folder>` runs `prepare` here without installing this package's devDependencies,
// so TypeScript may be missing: it is then installed first, exactly as package-lock.json pins it
// (`npm ci --ignore-scripts`, from the npm registry or npm's cache), into this folder's node_modules.
// In a clone where `npm ci` or `npm install` ran, it only compiles.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

function run(command, args, env) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: "inherit", env });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.error(`@boxline/client: ${[command, ...args].join(" ")} failed (exit ${result.status})`);
    process.exit(result.status ?? 1);
  }
}

if (!existsSync(TSC)) {
  // The installing npm's settings for the consumer (its prefix, --global, --omit=dev, --save…) are
  // not meant for this folder: only settings that say where packages come from are passed on.
  const keep = /^npm_config_(registry|cache|userconfig|globalconfig|proxy|https_proxy|noproxy|strict_ssl|cafile|ca|offline|prefer_offline|prefer_online|fetch_.*|@.*:registry|\/\/.*)$/i;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) || keep.test(k)));
  const npm = process.env.npm_execpath;
  const args = ["ci", "--ignore-scripts", "--include=dev", "--no-audit", "--no-fund", "--loglevel=error"];
  console.error("@boxline/client: installing TypeScript to compile the package (npm ci --ignore-scripts)");
  if (npm && npm.endsWith(".js")) run(process.execPath, [npm, ...args], env);
  else run(process.platform === "win32" ? "npm.cmd" : "npm", args, env);
}
run(process.execPath, [TSC, "-p", join(ROOT, "tsconfig.json")], process.env);
