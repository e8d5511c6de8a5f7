// Puts gradaudit and its run-time dependencies into bundled/libs, so that the packaged extension
// runs the server with any Python >= 3.10 and nothing installed (importStrategy: useBundled).
// The Python that builds the bundle: $GRADAUDIT_BUNDLE_PYTHON, else python3.
import { execFileSync } from "child_process";
import { mkdirSync, rmSync, writeFileSync } from "fs";
import { dirname, join, resolve } from "path";
import { fileURLToPath } from "url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const root = resolve(here, "..");
const libs = join(here, "bundled", "libs");
const python = process.env.GRADAUDIT_BUNDLE_PYTHON || "python3";

rmSync(join(here, "bundled"), { recursive: true, force: true });
mkdirSync(libs, { recursive: true });
execFileSync(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
    "--target", libs, root], { stdio: "inherit" });
// console scripts are of no use inside the extension; jedi (5,600 files of stubs) and parso are
// declared dependencies that neither the engine nor the server imports
for (const name of ["bin", "jedi", "parso"]) {
    rmSync(join(libs, name), { recursive: true, force: true });
}
const version = execFileSync(python, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).trim();
// libcst (used only for one structural fix) has a compiled part built for this Python version
writeFileSync(join(here, "bundled", "manifest.json"), JSON.stringify({ builtWith: `python${version}` }, null, 1) + "\n");
console.log(`bundled gradaudit into ${libs} (python ${version})`);
