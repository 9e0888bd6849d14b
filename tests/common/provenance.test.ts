// gitCommit (common/provenance.ts): the commit a sweep records, read from .git without running git.
import { assertEquals } from "../assert.ts";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitCommit } from "../../common/provenance.ts";

const A = "a".repeat(40), B = "b".repeat(40), C = "c".repeat(40);

function write(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

Deno.test("gitCommit reads loose, packed and detached heads, follows a worktree's .git file, null outside", () => {
  const root = mkdtempSync(join(tmpdir(), "acebench-git-"));
  try {
    const repo = join(root, "repo"), git = join(repo, ".git");
    write(join(git, "HEAD"), "ref: refs/heads/main\n");
    write(join(git, "refs/heads/main"), `${A}\n`);
    mkdirSync(join(repo, "sub/deeper"), { recursive: true });
    assertEquals(gitCommit(join(repo, "sub/deeper")), A);

    rmSync(join(git, "refs/heads/main"));
    write(join(git, "packed-refs"), `# pack-refs\n${B} refs/heads/main\n`);
    assertEquals(gitCommit(repo), B);

    const wt = join(root, "wt"), wtGit = join(git, "worktrees/wt");
    write(join(wt, ".git"), `gitdir: ${wtGit}\n`);
    write(join(wtGit, "HEAD"), "ref: refs/heads/topic\n");
    write(join(wtGit, "commondir"), "../..\n");
    write(join(git, "refs/heads/topic"), `${C}\n`);
    assertEquals(gitCommit(wt), C);

    write(join(wtGit, "HEAD"), `${A}\n`);
    assertEquals(gitCommit(wt), A);
    assertEquals(gitCommit(join(root)), null);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
