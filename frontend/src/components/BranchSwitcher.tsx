import { branchPosition } from "../lib/branches";

interface Props {
  branch: string | undefined;
  options: readonly string[] | undefined;
  onSelect: (branch: string) => void;
  /** What the branches are of, for screen readers ("message", "answer"). */
  label: string;
}

/** `‹ 2 / 3 ›`: moves between the versions of a message (shown only when there are several). */
export function BranchSwitcher({ branch, options, onSelect, label }: Props) {
  const position = branchPosition(branch, options);
  if (!position || !options) return null;
  const { index, count } = position;
  const go = (to: number) => {
    const next = options[to];
    if (next !== undefined) onSelect(next);
  };
  return (
    <div className="branch-switcher" role="group" aria-label={`Versions of this ${label}`} data-testid="branch-switcher">
      <button type="button" className="icon-button" aria-label={`Previous version of this ${label}`} disabled={index === 0} onClick={() => go(index - 1)}>
        ‹
      </button>
      <span className="branch-position" aria-live="polite">
        {index + 1} / {count}
      </span>
      <button
        type="button"
        className="icon-button"
        aria-label={`Next version of this ${label}`}
        disabled={index === count - 1}
        onClick={() => go(index + 1)}
      >
        ›
      </button>
    </div>
  );
}
