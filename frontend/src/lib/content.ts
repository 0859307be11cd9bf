import type { Message } from "@langchain/langgraph-sdk";

type Content = Message["content"] | unknown;

/** Plain text of a message's content (string or list of content blocks). */
export function contentText(content: Content): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === "string") parts.push(block);
    else if (block && typeof block === "object") {
      const b = block as Record<string, unknown>;
      if (b.type === "text" && typeof b.text === "string") parts.push(b.text);
    }
  }
  return parts.join("");
}

/** Image URLs found in content blocks (`image_url` as string or `{url}`). */
export function contentImages(content: Content): string[] {
  if (!Array.isArray(content)) return [];
  const urls: string[] = [];
  for (const block of content) {
    if (!block || typeof block !== "object") continue;
    const b = block as Record<string, unknown>;
    if (b.type !== "image_url") continue;
    const iu = b.image_url;
    if (typeof iu === "string") urls.push(iu);
    else if (iu && typeof iu === "object" && typeof (iu as { url?: unknown }).url === "string") {
      urls.push((iu as { url: string }).url);
    }
  }
  return urls;
}

/**
 * Reasoning text of an AI message: `additional_kwargs.reasoning_content`, or
 * `reasoning` / `thinking` content blocks (Anthropic-style).
 */
export function reasoningText(message: Pick<Message, "content" | "additional_kwargs">): string {
  const kw = message.additional_kwargs ?? {};
  const fromKwargs = typeof kw.reasoning_content === "string" ? kw.reasoning_content : "";
  const blocks: string[] = [];
  if (Array.isArray(message.content)) {
    for (const block of message.content as unknown[]) {
      if (!block || typeof block !== "object") continue;
      const b = block as Record<string, unknown>;
      if (b.type === "thinking" && typeof b.thinking === "string") blocks.push(b.thinking);
      else if (b.type === "reasoning" && typeof b.reasoning === "string") blocks.push(b.reasoning);
    }
  }
  return [fromKwargs, ...blocks].filter(Boolean).join("\n\n");
}

/** Text of a tool result, pretty-printing JSON-looking content. */
export function toolResultText(content: Content): string {
  const text = contentText(content);
  const trimmed = text.trim();
  if ((trimmed.startsWith("{") && trimmed.endsWith("}")) || (trimmed.startsWith("[") && trimmed.endsWith("]"))) {
    try {
      return JSON.stringify(JSON.parse(trimmed), null, 2);
    } catch {
      return text;
    }
  }
  return text;
}
