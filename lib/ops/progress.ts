/**
 * How far a long operation (OPTIMIZE, VACUUM) has got: files and bytes done of the total it set
 * out to do. Reported after every unit of work, first with nothing done, so a caller can show a
 * progress line or log it; the operation's own metrics carry the final numbers.
 */
export interface Progress {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
}

export type OnProgress = (progress: Progress) => void;

/** A counter that reports each step to `onProgress` (when there is one). */
export function progressCounter(
  totals: { files: number; bytes: number },
  onProgress: OnProgress | undefined,
): { advance(files: number, bytes: number): void } {
  const p: Progress = {
    filesDone: 0,
    filesTotal: totals.files,
    bytesDone: 0,
    bytesTotal: totals.bytes,
  };
  onProgress?.({ ...p });
  return {
    advance(files, bytes) {
      p.filesDone += files;
      p.bytesDone += bytes;
      onProgress?.({ ...p });
    },
  };
}
