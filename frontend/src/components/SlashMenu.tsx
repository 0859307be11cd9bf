import { slashOptionId, type SkillOption } from "../lib/slash";

interface Props {
  id: string;
  options: readonly SkillOption[];
  active: number;
  onPick: (name: string) => void;
  onHover: (index: number) => void;
}

/** The `/` skills list above the composer (the textarea keeps focus; see Composer). */
export function SlashMenu({ id, options, active, onPick, onHover }: Props) {
  return (
    <ul className="slash-menu" id={id} role="listbox" aria-label="Skills">
      {options.map((skill, i) => (
        <li
          key={skill.name}
          id={slashOptionId(id, i)}
          role="option"
          aria-selected={i === active}
          onMouseDown={(e) => e.preventDefault()}
          onMouseEnter={() => onHover(i)}
          onClick={() => onPick(skill.name)}
        >
          <span className="skill-name">/{skill.name}</span>
          {skill.description && <span className="skill-description">{skill.description}</span>}
        </li>
      ))}
    </ul>
  );
}
