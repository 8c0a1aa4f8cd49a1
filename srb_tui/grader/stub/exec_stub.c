/* srb's exec stub: what a candidate process becomes when it starts the code under test.
 *
 * Stage III's exec broker (srb_tui/grader/exec_broker.py) catches every execve of a
 * candidate through a seccomp user notification. When the file started is code under test,
 * the broker starts it itself as the submission's uid, with the candidate process's open
 * descriptors, and lets the candidate process exec this stub instead. The stub stands in
 * for the program: it holds no descriptor but the broker's channel (fd 1000), passes every
 * signal it receives on to the broker (which delivers it to the program), and ends the way
 * the program ended (the same exit status, or the same signal). Built static, so it runs
 * in any image.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>

static int errno_is_intr(void) { return errno == EINTR; }

#define CHANNEL 1000

static void forward(int sig) {
    unsigned char byte = (unsigned char)sig;
    ssize_t ignored = write(CHANNEL, &byte, 1);
    (void)ignored;
}

int main(void) {
    syscall(SYS_close_range, 0U, (unsigned)(CHANNEL - 1), 0U);
    syscall(SYS_close_range, (unsigned)(CHANNEL + 1), ~0U, 0U);
    /* A group of its own, so `kill -- -PID` of the program the candidate thinks it started
     * reaches the stub, which passes it on to the program's group. */
    setpgid(0, 0);
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = forward;
    act.sa_flags = SA_RESTART;
    sigfillset(&act.sa_mask);
    for (int sig = 1; sig < 65; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || sig == SIGCONT
            || sig == SIGWINCH || sig == SIGURG || sig == 32 || sig == 33)
            continue;
        sigaction(sig, &act, NULL);
    }
    unsigned char buf[4];
    size_t got = 0;
    while (got < sizeof buf) {
        ssize_t n = read(CHANNEL, buf + got, sizeof buf - got);
        if (n > 0) { got += (size_t)n; continue; }
        if (n < 0 && errno_is_intr()) continue;
        _exit(125); /* the broker went away without a status: a harness fault */
    }
    int32_t status;
    memcpy(&status, buf, sizeof status);
    if (status >= 0 && status < 256) _exit(status);
    int sig = -status;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    raise(sig);
    _exit(128 + sig);
}
