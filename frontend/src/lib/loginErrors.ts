import { HttpError } from "../api/http";
import { describeError } from "./errors";

function rateLimited(seconds: number): string {
  return `Too many attempts. Try again in ${seconds} second${seconds === 1 ? "" : "s"}.`;
}

/** The message for a failed password change (the server answers 403 to a wrong current password). */
export function passwordChangeFailure(error: unknown): string {
  if (error instanceof HttpError) {
    if ((error.status === 401 || error.status === 403) && /current.?password/i.test(error.message)) {
      return "The current password is wrong.";
    }
    if (error.status === 429) return rateLimited(error.retryAfter ?? 60);
    return error.message;
  }
  return `Could not change the password: ${describeError(error)}`;
}

/** The message for a failed sign-in, and how long to wait before the next try (rate limited). */
export function loginFailure(error: unknown): { message: string; waitSeconds: number } {
  if (error instanceof HttpError) {
    if (error.status === 401) return { message: "Wrong username or password.", waitSeconds: 0 };
    if (error.status === 429) {
      const wait = error.retryAfter ?? 60;
      return { message: rateLimited(wait), waitSeconds: wait };
    }
    return { message: error.message, waitSeconds: 0 };
  }
  return { message: `Could not sign in: ${describeError(error)}`, waitSeconds: 0 };
}

/** The message for a failed first-run setup. */
export function setupFailure(error: unknown): string {
  if (error instanceof HttpError) {
    if (error.status === 409) return `${error.message}. Sign in instead.`;
    if (error.status === 429) return rateLimited(error.retryAfter ?? 60);
    return error.message;
  }
  return `Could not create the account: ${describeError(error)}`;
}
