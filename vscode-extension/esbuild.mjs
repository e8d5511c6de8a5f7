// Bundles the extension (and vscode-languageclient) into dist/extension.js; with --tests, the unit
// tests into out/test/unit/ (they import only the pure modules, never `vscode`).
import * as esbuild from "esbuild";
import { copyFileSync, readdirSync } from "fs";

const tests = process.argv.includes("--tests");
const watch = process.argv.includes("--watch");

const options = tests
    ? {
        entryPoints: readdirSync("test/unit").filter((f) => f.endsWith(".test.ts")).map((f) => `test/unit/${f}`),
        outdir: "out/test/unit",
        bundle: true,
        platform: "node",
        format: "cjs",
        target: "node20",
        external: ["vscode"],
        sourcemap: "inline",
        logLevel: "warning",
    }
    : {
        entryPoints: ["src/extension.ts"],
        outfile: "dist/extension.js",
        bundle: true,
        platform: "node",
        format: "cjs",
        target: "node20",
        external: ["vscode"],
        minify: !watch,
        sourcemap: watch ? "inline" : false,
        logLevel: "warning",
    };

// The Markdown preview draws the audit report's Mermaid graphs with the mermaid package itself.
const preview = {
    entryPoints: ["src/preview/renderMermaid.ts"],
    outfile: "dist/preview/render-mermaid.js",
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2020",
    minify: !watch,
    logLevel: "warning",
};

if (watch) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
} else {
    await esbuild.build(options);
    if (!tests) {
        await esbuild.build(preview);
        copyFileSync("node_modules/mermaid/dist/mermaid.min.js", "dist/preview/mermaid.min.js");
    }
}
