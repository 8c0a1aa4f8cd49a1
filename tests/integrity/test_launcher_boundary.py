"""Stage II: the program a module starts cannot read or steer the process that judges it.

Both ways a module starts submission code (the ``srb-submission`` executable and
``srb_submission.run`` in the module's own process) fork; only the child becomes the slot
uid and execs the program, while the waiting side that reads and reports the exit status
keeps the module's identity (uid 0 in a stage container). The hostile program below (Perl:
every Debian image has it) goes after its parent the ways a cheat would: list and follow
``/proc/PPID/fd``, read ``/proc/PPID/environ``, ``ptrace`` attach, ``process_vm_writev``,
and write ``exit_group(0)`` at the parent's resume address through ``/proc/PPID/mem`` so
that the launcher would report 0 whatever the program did. It then exits 3.

The control runs the same program under a bash of the slot uid (a parent that shares the
program's uid, as a launcher that dropped before forking would): there the patch works and
bash's ``exit 7`` becomes 0, which is what every refusal below is measured against
(``process_vm_writev`` only where the container's seccomp profile allows it at all: Docker's
default allows it when the container holds CAP_SYS_PTRACE).
"""

from __future__ import annotations

import pytest

from srb_tui.service.grading.stages.stage_container import StageContainer

from .test_stage_container import Submit, as_grader, as_submission, box, submit

__all__ = ["box", "submit"]  # the module-scoped stage container and both launchers

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

ATTACK = r"""
use strict; use Fcntl;
my $pp = getppid();
sub note { print STDERR "srb-attack $_[0]\n" }
if (opendir(my $d, "/proc/$pp/fd")) {
  my @f = grep { !/^\./ } readdir($d);
  note("fd: READ " . join(",", map { "$_=" . (readlink("/proc/$pp/fd/$_") // "?") } @f));
} else { note("fd: refused $!") }
if (open(my $e, "<", "/proc/$pp/environ")) { local $/; my $x = <$e>;
  note("environ: " . (defined $x ? "READ" : "refused $!")) } else { note("environ: refused $!") }
my ($sp, $pc);
for (1 .. 2000) {
  open(my $s, "<", "/proc/$pp/syscall") or last; my $l = <$s>; close $s;
  my @w = split " ", $l // ""; if (@w == 9) { ($sp, $pc) = (hex $w[7], hex $w[8]); last }
  select(undef, undef, undef, 0.001);
}
note(defined $pc ? "syscall: READ" : "syscall: refused $!");
if (syscall(101, 0x4206, $pp, 0, 0) == 0) { note("ptrace: ATTACHED"); syscall(101, 17, $pp, 0, 0) }
else { note("ptrace: refused $!") }
my $buf = "\0" x 8;
my $iov = pack("QQ", unpack("Q", pack("p", $buf)), 8);
my $riov = pack("QQ", $sp // 0, 8);
if (defined $sp && syscall(310, $pp, $iov, 1, $riov, 1, 0) == 8
    && syscall(311, $pp, $iov, 1, $riov, 1, 0) == 8) { note("process_vm_writev: WROTE") }
else { note("process_vm_writev: refused $!") }
if (sysopen(my $m, "/proc/$pp/mem", O_RDWR)) {
  my $code = "\xbf\x00\x00\x00\x00\xb8\xe7\x00\x00\x00\x0f\x05";
  if (defined $pc && sysseek($m, $pc, 0) && syswrite($m, $code) == length $code) {
    note("mem: FORGED") } else { note("mem: opened, write failed $!") }
} else { note("mem: refused $!") }
exit 3;
"""


def _perl(code: str) -> str:
    return "perl -e '" + code.replace("'", "'\\''") + "'"


def _outcomes(out: str) -> dict[str, str]:
    lines = [line.removeprefix("srb-attack ") for line in out.splitlines()
             if line.startswith("srb-attack ")]
    return dict(line.split(": ", 1) for line in lines)


async def test_the_attack_forges_a_parent_of_the_programs_own_uid(box: StageContainer) -> None:
    """Control: under a bash of the slot uid the same program patches bash's exit to 0."""
    code, out = await as_submission(box, _perl(ATTACK) + "; exit 7")
    seen = _outcomes(out)
    assert seen["mem"] == "FORGED" and seen["fd"].startswith("READ"), out
    assert seen["ptrace"] == "ATTACHED" and seen["environ"] == "READ", out
    # (process_vm_writev is not asserted here: Docker's default seccomp allows it only in
    # a container granted CAP_SYS_PTRACE, so whether it works for the same uid depends on
    # the grader's capabilities, not on the boundary tested below)
    assert code == 0, out  # bash's "exit 7" never ran: the forged exit_group(0) did


async def test_the_launchers_waiting_side_is_out_of_the_programs_reach(
    box: StageContainer, submit: Submit
) -> None:
    """Through either launcher the parent is the module's identity: every attempt is
    refused and the module sees the program's own exit status."""
    code, out = await submit(box, "exec " + _perl(ATTACK))
    seen = _outcomes(out)
    assert set(seen) == {"fd", "environ", "syscall", "ptrace", "process_vm_writev", "mem"}, out
    assert all(value.startswith("refused") for value in seen.values()), out
    assert code == 3, out


async def test_the_parents_identity_and_the_kernels_dump_rule(box: StageContainer,
                                                              submit: Submit) -> None:
    """What the refusals rest on: the program's parent runs as uid 0 (the module's
    identity), and the kernel makes a process that changes its uid non-dumpable
    (``fs.suid_dumpable`` = 0), so a fork of the module is unreadable to the slot from the
    drop to its exec."""
    code, out = await submit(box, "exec perl -e 'print((stat(\"/proc/\" . getppid()))[4])'")
    assert code == 0 and out.strip() == "0", out
    dumpable = await as_grader(box, "print(open('/proc/sys/fs/suid_dumpable').read().strip())")
    assert dumpable.strip() == "0"
