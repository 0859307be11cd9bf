export type ArtifactKind = "markdown" | "code" | "text" | "table" | "mermaid" | "image" | "pdf" | "html" | "binary";

const VIRTUAL_ROOT = "/mnt/user-data/";

const CODE_LANGS: Record<string, string> = {
  py: "python", js: "javascript", mjs: "javascript", cjs: "javascript", ts: "typescript",
  tsx: "typescript", jsx: "javascript", json: "json", yaml: "yaml", yml: "yaml", toml: "ini",
  sh: "bash", bash: "bash", zsh: "bash", go: "go", rs: "rust", java: "java", kt: "kotlin",
  c: "c", h: "c", cpp: "cpp", hpp: "cpp", cs: "csharp", rb: "ruby", php: "php", sql: "sql",
  css: "css", scss: "scss", xml: "xml", svg: "xml", swift: "swift", r: "r", lua: "lua",
  ini: "ini", dockerfile: "dockerfile", makefile: "makefile",
};
const TEXT_EXT = new Set(["txt", "log", "env", "cfg", "conf", "rst", "tex"]);
const IMAGE_EXT = new Set(["png", "jpg", "jpeg", "gif", "webp", "bmp", "avif", "ico"]);

function extension(path: string): string {
  const base = path.split("/").pop() ?? "";
  const lower = base.toLowerCase();
  if (lower === "dockerfile" || lower === "makefile") return lower;
  const dot = lower.lastIndexOf(".");
  return dot > 0 ? lower.slice(dot + 1) : "";
}

export function fileName(path: string): string {
  return path.split("/").filter(Boolean).pop() ?? path;
}

/**
 * How to preview an artifact, from its file name. SVG is shown as code (never rendered inline);
 * HTML runs in a sandboxed frame (see HtmlArtifact).
 */
export function artifactKind(path: string): ArtifactKind {
  const ext = extension(path);
  if (ext === "md" || ext === "markdown") return "markdown";
  if (ext === "csv" || ext === "tsv") return "table";
  if (ext === "mmd" || ext === "mermaid") return "mermaid";
  if (ext === "html" || ext === "htm") return "html";
  if (ext === "pdf") return "pdf";
  if (IMAGE_EXT.has(ext)) return "image";
  if (ext in CODE_LANGS) return "code";
  if (TEXT_EXT.has(ext)) return "text";
  return "binary";
}

/** highlight.js language for a code artifact, or undefined. */
export function codeLanguage(path: string): string | undefined {
  return CODE_LANGS[extension(path)];
}

/** `/mnt/user-data/outputs/a b.md` → `outputs/a%20b.md` (each segment encoded). */
export function relativeArtifactPath(virtualPath: string): string {
  const rel = virtualPath.startsWith(VIRTUAL_ROOT)
    ? virtualPath.slice(VIRTUAL_ROOT.length)
    : virtualPath.replace(/^\/+/, "");
  return rel
    .split("/")
    .filter((s) => s !== "" && s !== "." && s !== "..")
    .map(encodeURIComponent)
    .join("/");
}

export function artifactUrl(threadId: string, virtualPath: string): string {
  return `/api/threads/${encodeURIComponent(threadId)}/artifacts/${relativeArtifactPath(virtualPath)}`;
}

/** Unique artifact paths in the order the agent presented them. */
export function normalizeArtifacts(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const v of value) {
    if (typeof v === "string" && v && !seen.has(v)) {
      seen.add(v);
      out.push(v);
    }
  }
  return out;
}

/** Column separator of a table artifact. */
export function tableSeparator(path: string): "," | "\t" {
  return extension(path) === "tsv" ? "\t" : ",";
}
