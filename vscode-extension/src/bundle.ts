// The bundled gradaudit ships as one archive, bundled/libs.zip (scripts/bundle-server.mjs): a .vsix
// of some 6,000 files took vsce most of an hour to package. It is unpacked on first use, by the
// interpreter that will run the server (Python's own zipfile: nothing else is needed), into the
// extension's global storage, in a folder named after the archive's hash: an updated extension
// gets a folder of its own. Each start unpacks into a private folder that is then renamed into
// place, so that a half-written folder is never used and two windows starting at once keep
// whichever was renamed first. A folder no start has used for a week (an older version's) is
// removed: a window still running an older version starts its workers from its folder.
import * as fs from "fs";
import * as path from "path";

export interface BundleManifest {
    /** The archive's file name, in bundled/. */
    archive: string;
    /** sha256 of the archive, hex: names the folder it is unpacked into. */
    sha256: string;
    /** How many files the archive holds. */
    files: number;
}

const PREFIX = "libs-";
const PARTIAL = ".partial-";

/** bundled/manifest.json of an extension that ships the archive; undefined for one that does not. */
export function readManifest(extensionPath: string): BundleManifest | undefined {
    try {
        const data = JSON.parse(fs.readFileSync(path.join(extensionPath, "bundled", "manifest.json"), "utf8"));
        if (typeof data.archive === "string" && /^[0-9a-f]{64}$/.test(data.sha256) && Number.isInteger(data.files)) {
            return { archive: data.archive, sha256: data.sha256, files: data.files };
        }
    } catch {
        // no manifest, or not ours: no bundle
    }
    return undefined;
}

/** The folder (under the storage folder) the archive is unpacked into. */
export function unpackedName(manifest: BundleManifest): string {
    return PREFIX + manifest.sha256.slice(0, 16);
}

/** An unpacked bundle that can run: the server package is there. */
export function isUnpacked(folder: string): boolean {
    return fs.existsSync(path.join(folder, "gradaudit", "server", "__init__.py"));
}

export const STALE_MS = 7 * 24 * 3600_000;

/** Folders of other bundles that no start has used for STALE_MS (`idle`: ms since the last use;
 * a private folder of an unpacking that died was last used when it was made). */
export function staleFolders(names: string[], current: string, idle: (name: string) => number): string[] {
    return names.filter((n) => n.startsWith(PREFIX) && n !== current && idle(n) > STALE_MS);
}

/** Unpacks argv[1] into the folder argv[2] and prints how many files it holds. */
export const UNPACK_SCRIPT = [
    "import sys, zipfile",
    "with zipfile.ZipFile(sys.argv[1]) as z:",
    "    z.extractall(sys.argv[2])",
    "    print(len([i for i in z.infolist() if not i.is_dir()]))",
].join("\n");

/** Runs UNPACK_SCRIPT with the archive and the destination; resolves to its stdout, or throws. */
export type Unzip = (archive: string, destination: string) => Promise<string>;

/**
 * The folder of the unpacked bundle, unpacking it first if no start did before; undefined if the
 * extension ships no bundle. Throws when the archive cannot be unpacked.
 */
export async function unpackBundle(extensionPath: string, storage: string, unzip: Unzip): Promise<string | undefined> {
    const manifest = readManifest(extensionPath);
    if (manifest === undefined) {
        return undefined;
    }
    const name = unpackedName(manifest);
    const target = path.join(storage, name);
    if (!isUnpacked(target)) {
        fs.mkdirSync(storage, { recursive: true });
        const partial = fs.mkdtempSync(path.join(storage, name + PARTIAL));
        try {
            const out = await unzip(path.join(extensionPath, "bundled", manifest.archive), partial);
            const count = Number(out.trim().split(/\r?\n/).pop());
            if (count !== manifest.files) {
                throw new Error(`unpacking ${manifest.archive} gave ${out.trim() || "nothing"}, not ${manifest.files} files`);
            }
            if (!isUnpacked(partial)) {
                throw new Error(`${manifest.archive} holds no gradaudit/server/__init__.py`);
            }
            try {
                fs.renameSync(partial, target);
            } catch (e) {
                if (!isUnpacked(target)) {
                    throw e;
                }
                // another window unpacked it first: use that one
            }
        } finally {
            fs.rmSync(partial, { recursive: true, force: true });
        }
    }
    const now = new Date();
    fs.utimesSync(target, now, now);   // in use
    for (const old of staleFolders(fs.readdirSync(storage), name, (n) => idleFor(path.join(storage, n)))) {
        fs.rmSync(path.join(storage, old), { recursive: true, force: true });
    }
    return target;
}

function idleFor(folder: string): number {
    try {
        return Date.now() - fs.statSync(folder).mtimeMs;
    } catch {
        return 0;
    }
}
