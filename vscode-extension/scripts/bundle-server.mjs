// Puts gradaudit and its run-time dependencies into one archive, bundled/libs.zip, so that the
// packaged extension runs the server with any CPython 3.10 to 3.13 on any platform and nothing
// installed (importStrategy: useBundled). Everything bundled is pure Python: the dependencies are
// resolved for the oldest supported Python (3.10, which alone needs tomli and exceptiongroup; newer
// ones never import them) as platform-independent wheels only (`--platform any`), and the bundle
// is refused if any compiled file slipped in anyway.
// One .vsix then serves Linux, macOS and Windows, x64 and arm64.
// One archive, not a folder: some 6,000 files (5,500 of them jedi's typeshed stubs) made vsce
// take most of an hour (it scans every packaged file for secrets), and a .vsix of one archive
// installs as fast as any. The extension unpacks it once, on first use (src/bundle.ts).
// The Python that runs pip: $GRADAUDIT_BUNDLE_PYTHON, else python3.
import { execFileSync } from "child_process";
import { createHash } from "crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { dirname, join, relative, resolve } from "path";
import { fileURLToPath } from "url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const root = resolve(here, "..");
const bundled = join(here, "bundled");
const archive = join(bundled, "libs.zip");
const libs = mkdtempSync(join(tmpdir(), "gradaudit-libs-"));   // what goes into the archive
process.on("exit", () => rmSync(libs, { recursive: true, force: true }));
const python = process.env.GRADAUDIT_BUNDLE_PYTHON || "python3";
const OLDEST = "3.10";

// Requirements of the bundled distributions that some supported Python (3.10 to 3.13) on some
// platform needs and the bundle lacks, as a JSON list.
const MISSING = `
import json, sys
from importlib.metadata import distributions
try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name
libs = sys.argv[1]
dists = list(distributions(path=[libs]))
have = {canonicalize_name(d.metadata["Name"]) for d in dists}
envs = [{"python_version": f"3.{minor}", "python_full_version": f"3.{minor}.0", "sys_platform": plat,
         "platform_system": system, "os_name": os, "implementation_name": "cpython",
         "platform_python_implementation": "CPython", "extra": ""}
        for minor in (10, 11, 12, 13)
        for plat, system, os in (("linux", "Linux", "posix"), ("darwin", "Darwin", "posix"), ("win32", "Windows", "nt"))]
need = set()
for d in dists:
    for text in d.requires or ():
        req = Requirement(text)
        if canonicalize_name(req.name) in have:
            continue
        if req.marker is None or any(req.marker.evaluate(env) for env in envs):
            need.add(f"{req.name}{req.specifier}")
print(json.dumps(sorted(need)))
`;

const pip = (...args) => execFileSync(python, ["-m", "pip", "--disable-pip-version-check", ...args], { stdio: "inherit" });

rmSync(bundled, { recursive: true, force: true });
mkdirSync(bundled, { recursive: true });
const wheels = mkdtempSync(join(tmpdir(), "gradaudit-bundle-"));
try {
    // gradaudit itself as a wheel first: --only-binary cannot take a source folder
    pip("wheel", "--quiet", "--no-deps", "--wheel-dir", wheels, root);
    const [wheel] = readdirSync(wheels).filter((f) => f.endsWith(".whl"));
    pip("install", "--quiet", "--no-compile", "--target", libs, "--only-binary=:all:", "--platform", "any", "--python-version", OLDEST,
        "--implementation", "cp", join(wheels, wheel));
    // pip evaluates environment markers for the Python running it, not for --python-version: add
    // what any supported Python or platform needs (tomli and exceptiongroup on 3.10, ...) until
    // nothing is missing
    for (let round = 0; ; round++) {
        const missing = JSON.parse(execFileSync(python, ["-c", MISSING, libs], { encoding: "utf8" }));
        if (!missing.length) {
            break;
        }
        if (round > 5) {
            throw new Error(`cannot complete the bundle: ${missing.join(", ")}`);
        }
        const extra = mkdtempSync(join(tmpdir(), "gradaudit-bundle-extra-"));
        try {
            pip("install", "--quiet", "--no-compile", "--no-deps", "--target", extra, "--only-binary=:all:",
                "--platform", "any", "--python-version", OLDEST, "--implementation", "cp", ...missing);
            for (const name of readdirSync(extra)) {
                if (name !== "bin") {
                    renameSync(join(extra, name), join(libs, name));
                }
            }
        } finally {
            rmSync(extra, { recursive: true, force: true });
        }
    }
} finally {
    rmSync(wheels, { recursive: true, force: true });
    rmSync(join(root, "build"), { recursive: true, force: true });
}
rmSync(join(libs, "bin"), { recursive: true, force: true });   // console scripts: of no use inside the extension

// The archive: files in a fixed order with a fixed date (the same libraries give the same bytes
// and so the same folder name once unpacked), no byte code.
const ZIP = `
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
count = 0
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for folder, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            full = os.path.join(folder, name)
            info = zipfile.ZipInfo(os.path.relpath(full, src).replace(os.sep, "/"), date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(full, "rb") as fh:
                z.writestr(info, fh.read())
            count += 1
print(count)
`;

const compiled = [];
const dists = [];
(function walk(dir) {
    for (const name of readdirSync(dir)) {
        const full = join(dir, name);
        if (statSync(full).isDirectory()) {
            if (dir === libs && name.endsWith(".dist-info")) {
                dists.push(name.replace(/\.dist-info$/, ""));
            }
            walk(full);
        } else if (/\.(so|pyd|dylib|dll)$/.test(name) || /\.cpython-\d+/.test(name)) {
            compiled.push(relative(libs, full));
        }
    }
})(libs);
if (compiled.length) {
    console.error(`the bundle must be pure Python to run on every platform and Python, but has: ${compiled.join(", ")}`);
    process.exit(1);
}
const files = Number(execFileSync(python, ["-c", ZIP, libs, archive], { encoding: "utf8" }).trim());
const sha256 = createHash("sha256").update(readFileSync(archive)).digest("hex");
writeFileSync(join(bundled, "manifest.json"), JSON.stringify({
    pure: true, resolvedFor: `cpython${OLDEST}`, distributions: dists.sort(), archive: "libs.zip", files, sha256,
}, null, 1) + "\n");
console.log(`bundled gradaudit into ${relative(here, archive)}: ${dists.join(", ")} (pure Python, dependencies for ${OLDEST} and later; ${files} files)`);
