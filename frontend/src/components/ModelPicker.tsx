import type { ModelInfo } from "../api/rest";
import { modelLabel } from "../lib/models";

interface Props {
  models: ModelInfo[];
  selected: string | null;
  onSelect: (name: string) => void;
  disabled?: boolean;
}

export function ModelPicker({ models, selected, onSelect, disabled }: Props) {
  if (models.length === 0) return null;
  return (
    <label className="model-picker">
      <span className="visually-hidden">Model</span>
      <select value={selected ?? ""} onChange={(e) => onSelect(e.target.value)} disabled={disabled} aria-label="Model">
        {models.map((m) => (
          <option key={m.name} value={m.name}>
            {modelLabel(m)}
          </option>
        ))}
      </select>
    </label>
  );
}
