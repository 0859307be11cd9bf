import { memo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import { safeUrl } from "../lib/urls";

const components: Components = {
  a({ href, children, node: _node, ...rest }) {
    if (!href) return <span className="md-inert-link">{children}</span>;
    return (
      <a {...rest} href={href} target="_blank" rel="noopener noreferrer nofollow">
        {children}
      </a>
    );
  },
  img({ src, alt, node: _node, ...rest }) {
    if (!src || typeof src !== "string") return <span>{alt}</span>;
    return <img {...rest} src={src} alt={alt ?? ""} loading="lazy" referrerPolicy="no-referrer" />;
  },
  table({ children, node: _node, ...rest }) {
    return (
      <div className="md-table-wrap">
        <table {...rest}>{children}</table>
      </div>
    );
  },
};

interface Props {
  text: string;
}

/**
 * Markdown with GFM and highlighted code. Raw HTML is never rendered
 * (`skipHtml`), and link/image URLs pass through `safeUrl`.
 */
function MarkdownImpl({ text }: Props) {
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[[rehypeHighlight, { detect: false, ignoreMissing: true }]]}
        skipHtml
        urlTransform={safeUrl}
        components={components}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}

export const Markdown = memo(MarkdownImpl);
