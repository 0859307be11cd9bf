import { Markdown } from "./LazyMarkdown";

interface Props {
  code: string;
  language?: string;
}

/** A code listing, highlighted through the same sanitised Markdown pipeline. */
export function CodeBlock({ code, language }: Props) {
  // A fence longer than any backtick run inside the code keeps it intact.
  const longest = Math.max(2, ...Array.from(code.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return <Markdown text={`${fence}${language ?? ""}\n${code}\n${fence}`} />;
}
