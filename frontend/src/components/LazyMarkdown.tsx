import { lazy, Suspense } from "react";

const Renderer = lazy(() => import("./Markdown").then((m) => ({ default: m.Markdown })));

interface Props {
  text: string;
}

/**
 * The Markdown renderer (remark, GFM, highlight.js: a large chunk) loaded on first use. Until it
 * arrives the text shows as plain pre-wrapped text in the same box, so nothing jumps or hides.
 */
export function Markdown({ text }: Props) {
  return (
    <Suspense
      fallback={
        <div className="markdown markdown-pending" data-testid="markdown-pending">
          {text}
        </div>
      }
    >
      <Renderer text={text} />
    </Suspense>
  );
}
