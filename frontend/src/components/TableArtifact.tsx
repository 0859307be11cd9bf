import { parseDelimited } from "../lib/csv";

interface Props {
  text: string;
  separator: "," | "\t";
  /** The text is only the start of the file (its last line may be cut). */
  partial: boolean;
  maxRows?: number;
}

/** A CSV/TSV artifact as a table (the first row as the header). */
export function TableArtifact({ text, separator, partial, maxRows = 2000 }: Props) {
  const body = partial ? text.slice(0, Math.max(0, text.lastIndexOf("\n"))) : text;
  const { rows, more } = parseDelimited(body, separator, maxRows);
  const [head, ...rest] = rows;
  if (!head) return <p className="artifact-note">The file is empty.</p>;
  return (
    <div className="md-table-wrap artifact-table" data-testid="table-artifact">
      <table>
        <thead>
          <tr>
            {head.map((cell, i) => (
              <th key={i} scope="col">{cell}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rest.map((row, r) => (
            <tr key={r}>
              {row.map((cell, i) => (
                <td key={i}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {more && <p className="artifact-note">Showing the first {maxRows} rows; download the file for the rest.</p>}
    </div>
  );
}
