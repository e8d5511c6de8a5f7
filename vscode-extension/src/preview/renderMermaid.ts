/// <reference lib="dom" />
// Runs inside VS Code's Markdown preview (contributes.markdown.previewScripts, after mermaid.min.js):
// draws each ```mermaid fence of a gradaudit audit report as a diagram. The preview re-renders its
// content on every edit and fires `vscode.markdown.updateContent`; the fences are drawn again then.
declare const mermaid: {
    initialize(config: Record<string, unknown>): void;
    render(id: string, text: string): Promise<{ svg: string }>;
};

let counter = 0;

async function draw(): Promise<void> {
    const blocks = Array.from(document.querySelectorAll("pre > code.language-mermaid, pre.language-mermaid > code"));
    if (blocks.length === 0 || typeof mermaid === "undefined") {
        return;
    }
    const dark = document.body.classList.contains("vscode-dark") || document.body.classList.contains("vscode-high-contrast");
    mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "default" });
    for (const code of blocks) {
        const pre = code.parentElement as HTMLElement;
        const box = document.createElement("div");
        box.className = "gradaudit-mermaid";
        try {
            const { svg } = await mermaid.render(`gradaudit-mermaid-${counter++}`, code.textContent ?? "");
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
