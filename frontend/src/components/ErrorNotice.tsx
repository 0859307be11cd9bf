interface Props {
  title?: string;
  message: string;
  onDismiss?: () => void;
}

export function ErrorNotice({ title = "Error", message, onDismiss }: Props) {
  return (
    <div className="error-notice" role="alert">
      <strong>{title}</strong>
      <span className="error-notice-text">{message}</span>
      {onDismiss && (
        <button type="button" className="icon-button" onClick={onDismiss} aria-label="Dismiss error">
          ×
        </button>
      )}
    </div>
  );
}
