import { describe, expect, it } from "vitest";
import { insertSkill, matchSkills, slashQuery } from "./slash";

const skills = [
  { name: "data-analysis", description: "Analyse data" },
  { name: "research-report", description: "Write a report" },
  { name: "frontend-design", description: "Design UIs" },
];

describe("slash skills", () => {
  it("finds the token at the caret", () => {
    expect(slashQuery("/", 1)).toEqual({ query: "", start: 0, end: 1 });
    expect(slashQuery("please /da", 10)).toEqual({ query: "da", start: 7, end: 10 });
    expect(slashQuery("a/b", 3)).toBeNull();
    expect(slashQuery("/data done", 10)).toBeNull();
  });

  it("ranks prefix matches first", () => {
    expect(matchSkills(skills, "").map((s) => s.name)).toEqual(["data-analysis", "research-report", "frontend-design"]);
    expect(matchSkills(skills, "de").map((s) => s.name)).toEqual(["frontend-design"]);
    expect(matchSkills(skills, "re").map((s) => s.name)).toEqual(["research-report"]);
  });

  it("replaces the token with the skill name", () => {
    const at = slashQuery("please /da now", 10)!;
    expect(insertSkill("please /da now", at, "data-analysis")).toEqual({ text: "please /data-analysis now", caret: 22 });
    expect(insertSkill("/", slashQuery("/", 1)!, "x")).toEqual({ text: "/x ", caret: 3 });
  });
});
