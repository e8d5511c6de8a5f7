import { strict as assert } from "node:assert";
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { readManifest, STALE_MS, UNPACK_SCRIPT, unpackBundle, unpackedName, Unzip } from "../../src/bundle";

const PYTHON = process.platform === "win32" ? "python" : "python3";

/** An extension folder whose bundled/libs.zip holds a minimal gradaudit.server package. */
function extension(files: Record<string, string> = { "gradaudit/server/__init__.py": "", "gradaudit/__init__.py": "", "pkg/m.py": "x = 1\n" }) {
    const ext = fs.mkdtempSync(path.join(os.tmpdir(), "ext-"));
    fs.mkdirSync(path.join(ext, "bundled"));
    const archive = path.join(ext, "bundled", "libs.zip");
    const make = "import json, sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    for k, v in json.loads(sys.argv[2]).items():\n        z.writestr(k, v)";
    execFileSync(PYTHON, ["-c", make, archive, JSON.stringify(files)]);
    const sha256 = createHash("sha256").update(fs.readFileSync(archive)).digest("hex");
    const manifest = { pure: true, archive: "libs.zip", files: Object.keys(files).length, sha256 };
    fs.writeFileSync(path.join(ext, "bundled", "manifest.json"), JSON.stringify(manifest));
    return { ext, storage: fs.mkdtempSync(path.join(os.tmpdir(), "storage-")), manifest };
}

/** The extension's way: the interpreter runs UNPACK_SCRIPT; counts its runs. */
function pythonUnzip(): Unzip & { runs: number } {
    const unzip = ((archive: string, destination: string) => {
        unzip.runs++;
        return new Promise<string>((resolve, reject) =>
            execFile(PYTHON, ["-c", UNPACK_SCRIPT, archive, destination], (err, stdout) => (err ? reject(err) : resolve(stdout))));
    }) as Unzip & { runs: number };
    unzip.runs = 0;
    return unzip;
}

test("the archive is unpacked once, into a folder named after its hash, by the interpreter", async () => {
    const { ext, storage, manifest } = extension();
    const unzip = pythonUnzip();
    const libs = await unpackBundle(ext, storage, unzip);
    assert.equal(libs, path.join(storage, unpackedName(manifest)));
    assert.equal(unpackedName(manifest), `libs-${manifest.sha256.slice(0, 16)}`);
    assert.equal(fs.readFileSync(path.join(libs!, "pkg", "m.py"), "utf8"), "x = 1\n");
    assert.equal(await unpackBundle(ext, storage, unzip), libs);
    assert.equal(unzip.runs, 1);
    assert.deepEqual(fs.readdirSync(storage), [path.basename(libs!)]);   // no private folder left
});

test("two windows starting at once share one folder", async () => {
    const { ext, storage } = extension();
    const [a, b] = await Promise.all([unpackBundle(ext, storage, pythonUnzip()), unpackBundle(ext, storage, pythonUnzip())]);
    assert.equal(a, b);
    assert.equal(fs.readdirSync(storage).length, 1);
});

test("an archive that does not unpack whole is refused and leaves nothing behind", async () => {
    const { ext, storage } = extension();
    const manifest = JSON.parse(fs.readFileSync(path.join(ext, "bundled", "manifest.json"), "utf8"));
    fs.writeFileSync(path.join(ext, "bundled", "manifest.json"), JSON.stringify({ ...manifest, files: 4 }));
    await assert.rejects(unpackBundle(ext, storage, pythonUnzip()), /libs.zip gave 3, not 4 files/);
    const broken: Unzip = async () => { throw new Error("python: not found"); };
    await assert.rejects(unpackBundle(ext, storage, broken), /python: not found/);
    assert.deepEqual(fs.readdirSync(storage), []);
});

test("an archive without the server is refused", async () => {
    const { ext, storage } = extension({ "pkg/m.py": "" });
    await assert.rejects(unpackBundle(ext, storage, pythonUnzip()), /holds no gradaudit\/server\/__init__.py/);
});

test("folders of other versions go once unused for a week; the ones in use stay", async () => {
    const { ext, storage } = extension();
    const old = path.join(storage, "libs-0123456789abcdef");
    const recent = path.join(storage, "libs-fedcba9876543210");
    const partial = path.join(storage, "libs-0011223344556677.partial-abc");
    const unrelated = path.join(storage, "settings");
    for (const dir of [old, recent, partial, unrelated]) {
        fs.mkdirSync(dir);
    }
    const weekAgo = new Date(Date.now() - STALE_MS - 60_000);
    fs.utimesSync(old, weekAgo, weekAgo);
    fs.utimesSync(unrelated, weekAgo, weekAgo);
    const libs = await unpackBundle(ext, storage, pythonUnzip());
    assert.deepEqual(fs.readdirSync(storage).sort(), [path.basename(libs!), path.basename(partial), path.basename(recent), "settings"].sort());
});

test("an extension without a bundle has none", async () => {
    const ext = fs.mkdtempSync(path.join(os.tmpdir(), "ext-"));
    assert.equal(readManifest(ext), undefined);
    assert.equal(await unpackBundle(ext, path.join(ext, "storage"), pythonUnzip()), undefined);
});
