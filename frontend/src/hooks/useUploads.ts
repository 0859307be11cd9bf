import { useCallback, useEffect, useState } from "react";
import { useGateway } from "../api/gateway";
import { deleteUpload, listUploads, uploadFiles, type UploadedFile } from "../api/rest";
import { describeError } from "../lib/errors";
import { checkUploads, DEFAULT_UPLOAD_LIMITS, limitsFromResponse, type UploadLimits } from "../lib/uploads";

export interface UploadsState {
  /** Files uploaded and waiting to be attached to the next message. */
  pending: UploadedFile[];
  limits: UploadLimits;
  busy: boolean;
  errors: string[];
  /** Check limits, then upload; `ensureThread` creates the thread first when needed. */
  add: (files: File[], ensureThread: () => Promise<string>) => Promise<void>;
  remove: (name: string) => Promise<void>;
  /** Take the pending files for a message being sent. */
  take: () => UploadedFile[];
  dismissErrors: () => void;
}

export function useUploads(threadId: string | null): UploadsState {
  const { fetch } = useGateway();
  const [pending, setPending] = useState<UploadedFile[]>([]);
  const [usedBytes, setUsedBytes] = useState(0);
  const [limits, setLimits] = useState<UploadLimits>(DEFAULT_UPLOAD_LIMITS);
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<string[]>([]);
  const [owner, setOwner] = useState<string | null>(threadId);

  // A different thread: drop its pending files (adjusting state during render, React's documented pattern).
  if (owner !== threadId) {
    setOwner(threadId);
    if (owner !== null) setPending([]);
    setErrors([]);
    setUsedBytes(0);
  }

  useEffect(() => {
    if (!threadId) return;
    const controller = new AbortController();
    listUploads(fetch, threadId, controller.signal)
      .then(({ files, raw }) => {
        setUsedBytes(files.reduce((n, f) => n + (f.size || 0), 0));
        setLimits(limitsFromResponse(raw));
      })
      .catch(() => {
        /* the listing is advisory */
      });
    return () => controller.abort();
  }, [fetch, threadId]);

  const add = useCallback(
    async (files: File[], ensureThread: () => Promise<string>) => {
      const { accepted, rejected } = checkUploads(files, usedBytes, limits);
      setErrors(rejected.map((r) => r.reason));
      if (accepted.length === 0) return;
      setBusy(true);
      try {
        const id = await ensureThread();
        const uploaded = await uploadFiles(fetch, id, accepted);
        const unreadable = uploaded.filter((f) => f.conversion_error);
        if (unreadable.length > 0) {
          setErrors((prev) => [
            ...prev,
            ...unreadable.map((f) => `${f.name} was uploaded, but could not be read as a document: ${f.conversion_error}`),
          ]);
        }
        setPending((prev) => [...prev.filter((p) => !uploaded.some((u) => u.name === p.name)), ...uploaded]);
        setUsedBytes((n) => n + uploaded.reduce((s, f) => s + f.size, 0));
      } catch (e) {
        setErrors((prev) => [...prev, `Upload failed: ${describeError(e)}`]);
      } finally {
        setBusy(false);
      }
    },
    [fetch, limits, usedBytes],
  );

  const remove = useCallback(
    async (name: string) => {
      const file = pending.find((p) => p.name === name);
      setPending((prev) => prev.filter((p) => p.name !== name));
      if (threadId && file) {
        try {
          await deleteUpload(fetch, threadId, name);
          setUsedBytes((n) => Math.max(0, n - file.size));
        } catch (e) {
          setErrors((prev) => [...prev, `Could not remove ${name}: ${describeError(e)}`]);
        }
      }
    },
    [fetch, pending, threadId],
  );

  const take = useCallback(() => {
    const files = pending;
    setPending([]);
    return files;
  }, [pending]);

  const dismissErrors = useCallback(() => setErrors([]), []);

  return { pending, limits, busy, errors, add, remove, take, dismissErrors };
}
