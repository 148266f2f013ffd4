/**
 * A task run again `intervalMs` after each run ends (so runs never overlap), until stopped. A
 * failing run is reported to `onError` and the next still comes.
 */
export interface RepeatingTask {
  /** No new run starts; resolves once the one under way (if any) has ended. */
  stop(): Promise<void>;
}

export function repeatEvery(
  intervalMs: number,
  task: () => Promise<unknown>,
  onError: (err: unknown) => void,
): RepeatingTask {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(() => {
      running = task()
        .catch(onError)
        .finally(() => {
          if (!stopped) schedule();
        });
    }, intervalMs);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
