import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withLock } from "./helpers/cached-venv.ts";

const lockIn = () => join(mkdtempSync(join(tmpdir(), "silt-lock-")), "install.lock");

describe("withLock (the venv install lock)", () => {
  it("runs one holder at a time", async () => {
    const lock = lockIn();
    const events: string[] = [];
    let release!: () => void;
    const first = withLock(lock, 10_000, async () => {
      events.push("first in");
      await new Promise<void>((r) => {
        release = r;
      });
      events.push("first out");
    });
    await new Promise((r) => setTimeout(r, 50));
    const second = withLock(lock, 10_000, async () => {
      events.push("second in");
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual(["first in"]);
    release();
    await Promise.all([first, second]);
    expect(events).toEqual(["first in", "first out", "second in"]);
    expect(existsSync(lock)).toBe(false);
  });

  it("takes over a lock whose holder has exited", async () => {
    const lock = lockIn();
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    mkdirSync(lock);
    writeFileSync(join(lock, "pid"), String(gone));
    let ran = false;
    await withLock(lock, 0, async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });

  it("waits for a live holder and gives up at the deadline", async () => {
    const lock = lockIn();
    mkdirSync(lock);
    writeFileSync(join(lock, "pid"), String(process.pid));
    await expect(withLock(lock, 0, async () => {})).rejects.toThrow(/timed out waiting/);
    expect(existsSync(lock)).toBe(true);
  });
});
