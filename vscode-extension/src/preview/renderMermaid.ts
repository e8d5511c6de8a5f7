/// <reference lib="dom" />
// Runs inside VS Code's Markdown preview (contributes.markdown.previewScripts, after mermaid.min.js):
// draws each ```mermaid fence of a gradaudit audit report as a diagram. The preview re-renders its
// content on every edit and fires `vscode.markdown.updateContent`; the fences are drawn again then.
declare const mermaid: {
    initialize(config: Record<string, unknown>): void;
    render(id: string, text: string): Promise<{ svg: string }>;
};

let counter = 0;

/** The fences still holding text: `<pre><code class="language-mermaid">` from markdown-it, or the
 * `<pre class="mermaid">` that newer previews emit (left alone once something has drawn it). */
function fences(): { pre: HTMLElement; text: string }[] {
    const out: { pre: HTMLElement; text: string }[] = [];
    for (const code of Array.from(document.querySelectorAll("pre > code.language-mermaid"))) {
        out.push({ pre: code.parentElement as HTMLElement, text: code.textContent ?? "" });
    }
    for (const pre of Array.from(document.querySelectorAll<HTMLElement>("pre.mermaid"))) {
        if (!pre.querySelector("svg") && !pre.hasAttribute("data-processed")) {
            out.push({ pre, text: pre.textContent ?? "" });
        }
    }
    return out;
}

async function draw(): Promise<void> {
    const blocks = fences();
    if (blocks.length === 0 || typeof mermaid === "undefined") {
        return;
    }
    const dark = document.body.classList.contains("vscode-dark") || document.body.classList.contains("vscode-high-contrast");
    mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "default" });
    for (const { pre, text } of blocks) {
        pre.setAttribute("data-processed", "true");
        const box = document.createElement("div");
        box.className = "gradaudit-mermaid";
        try {
            const { svg } = await mermaid.render(`gradaudit-mermaid-${counter++}`, text);
            box.innerHTML = svg;
            pre.replaceWith(box);
        } catch (e) {
            box.textContent = `mermaid: ${e instanceof Error ? e.message : String(e)}`;
            pre.after(box);
        }
    }
}

window.addEventListener("vscode.markdown.updateContent", () => void draw());
if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => void draw());
} else {
    void draw();
}
