import { formatBytes } from "./format";

export interface UploadLimits {
  /** Largest single file, bytes. */
  maxFileBytes: number;
  /** Largest total of all files on a thread, bytes. */
  maxTotalBytes: number;
}

/** The gateway's defaults (config `uploads.max_file_bytes` / `max_total_bytes`). */
export const DEFAULT_UPLOAD_LIMITS: UploadLimits = {
  maxFileBytes: 50 * 1024 * 1024,
  maxTotalBytes: 200 * 1024 * 1024,
};

export interface FileLike {
  name: string;
  size: number;
}

export interface UploadCheck<F extends FileLike> {
  accepted: F[];
  rejected: { file: F; reason: string }[];
}

/**
 * Split candidate files into those that fit the limits and those that do not,
 * given the bytes already uploaded to the thread. Files are taken in order, so
 * an early large file may push later ones over the total limit.
 */
export function checkUploads<F extends FileLike>(
  files: readonly F[],
  alreadyUploadedBytes: number,
  limits: UploadLimits = DEFAULT_UPLOAD_LIMITS,
): UploadCheck<F> {
  const accepted: F[] = [];
  const rejected: { file: F; reason: string }[] = [];
  let total = alreadyUploadedBytes;
  for (const file of files) {
    if (file.size === 0) {
      rejected.push({ file, reason: `${file.name} is empty` });
    } else if (file.size > limits.maxFileBytes) {
      rejected.push({
        file,
        reason: `${file.name} is ${formatBytes(file.size)}; the limit is ${formatBytes(limits.maxFileBytes)} per file`,
      });
    } else if (total + file.size > limits.maxTotalBytes) {
      rejected.push({
        file,
        reason: `${file.name} would exceed the ${formatBytes(limits.maxTotalBytes)} total for this chat`,
      });
    } else {
      accepted.push(file);
      total += file.size;
    }
  }
  return { accepted, rejected };
}

/** Read optional limits from a `GET /api/threads/{id}/uploads` answer. */
export function limitsFromResponse(body: unknown): UploadLimits {
  if (!body || typeof body !== "object") return DEFAULT_UPLOAD_LIMITS;
  const limits = (body as { limits?: unknown }).limits;
  if (!limits || typeof limits !== "object") return DEFAULT_UPLOAD_LIMITS;
  const l = limits as Record<string, unknown>;
  return {
    maxFileBytes: typeof l.max_file_bytes === "number" ? l.max_file_bytes : DEFAULT_UPLOAD_LIMITS.maxFileBytes,
    maxTotalBytes: typeof l.max_total_bytes === "number" ? l.max_total_bytes : DEFAULT_UPLOAD_LIMITS.maxTotalBytes,
  };
}
