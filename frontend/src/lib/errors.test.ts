// @vitest-environment node
import { describe, expect, it } from "vitest";
import { describeError, isAbortError, isErrorFallback } from "./errors";

describe("isErrorFallback", () => {
  it("is true only for AI messages with the flag", () => {
    expect(isErrorFallback({ type: "ai", additional_kwargs: { error_fallback: true } })).toBe(true);
    expect(isErrorFallback({ type: "ai", additional_kwargs: { error_fallback: "RateLimit" } })).toBe(true);
    expect(isErrorFallback({ type: "ai", additional_kwargs: {} })).toBe(false);
    expect(isErrorFallback({ type: "ai", additional_kwargs: { error_fallback: false } })).toBe(false);
    expect(isErrorFallback({ type: "human", additional_kwargs: { error_fallback: true } })).toBe(false);
  });
});

describe("describeError", () => {
  it("formats SSE error payloads, HTTP details and Errors", () => {
    expect(describeError({ error: "ValueError", message: "bad input" })).toBe("ValueError: bad input");
    expect(describeError({ detail: "Thread not found" })).toBe("Thread not found");
    expect(describeError(new TypeError("Failed to fetch"))).toBe("TypeError: Failed to fetch");
    expect(describeError(new Error("plain"))).toBe("plain");
    expect(describeError("text")).toBe("text");
    expect(describeError(null)).toBe("Unknown error");
    expect(describeError({ other: 1 })).toBe('{"other":1}');
  });
});

describe("isAbortError", () => {
  it("recognises user aborts only", () => {
    expect(isAbortError(new DOMException("The user aborted a request.", "AbortError"))).toBe(true);
    expect(isAbortError(new Error("signal is aborted without reason"))).toBe(true);
    expect(isAbortError(new Error("ValueError: boom"))).toBe(false);
    expect(isAbortError({ message: "aborted" })).toBe(false);
  });
});
