import { defaultUrlTransform } from "react-markdown";

/**
 * Keeps http(s), mailto and relative URLs; anything else (javascript:, data:,
 * vbscript:) becomes an empty string, so the link or image is inert.
 */
export function safeUrl(url: string): string {
  return defaultUrlTransform(url);
}
