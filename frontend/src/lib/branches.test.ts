import { afterEach, describe, expect, it } from "vitest";
import { branchPosition, loadBranch, saveBranch } from "./branches";

describe("branches", () => {
  afterEach(() => window.localStorage.clear());

  it("gives the position among the options, or null without a choice", () => {
    expect(branchPosition("b", ["a", "b", "c"])).toEqual({ index: 1, count: 3 });
    expect(branchPosition("a", ["a"])).toBeNull();
    expect(branchPosition(undefined, ["a", "b"])).toBeNull();
    expect(branchPosition("x", ["a", "b"])).toBeNull();
  });

  it("remembers the branch per thread; the newest branch is not stored", () => {
    saveBranch("t1", "c1>c2");
    saveBranch("t2", "");
    expect(loadBranch("t1")).toBe("c1>c2");
    expect(loadBranch("t2")).toBe("");
    expect(loadBranch(null)).toBe("");
    saveBranch("t1", "");
    expect(window.localStorage.getItem("pronghorn.branch.t1")).toBeNull();
  });
});
