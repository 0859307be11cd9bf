const PATHS = {
  paperclip: "M21 11.5 12.5 20a5 5 0 0 1-7-7l9-9a3.3 3.3 0 0 1 4.7 4.7l-9 9a1.7 1.7 0 0 1-2.4-2.4l8.3-8.3",
  trash: "M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3",
  pencil: "M4 20h4L19 9l-4-4L4 16v4zM13.5 6.5l4 4",
  pin: "M9 3h6l-1 6 4 4H6l4-4-1-6zM12 13v8",
  regenerate: "M20 11a8 8 0 1 0-2.3 5.7M20 4v7h-7",
  file: "M14 3H6v18h12V7l-4-4zM14 3v4h4",
  memory: "M6 3h12v18l-6-4-6 4V3zM9 8h6M9 11h4",
  thumbUp: "M3 11h4v10H3zM7 11l4-8c1.5 0 2.5 1 2.5 2.5V9h5a2 2 0 0 1 2 2.3l-1.2 7.5A2.5 2.5 0 0 1 16.8 21H7",
  thumbDown: "M3 13h4V3H3zM7 13l4 8c1.5 0 2.5-1 2.5-2.5V15h5a2 2 0 0 0 2-2.3l-1.2-7.5A2.5 2.5 0 0 0 16.8 3H7",
} as const;

interface Props {
  name: keyof typeof PATHS;
  size?: number;
}

/** Small stroke icons (no icon font, no emoji: they render the same everywhere). */
export function Icon({ name, size = 16 }: Props) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} />
    </svg>
  );
}
