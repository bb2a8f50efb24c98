/*
 * jobs-supervise: runs one job command so that nothing it starts outlives its attempt or its worker.
 *
 *   jobs-supervise [--user NAME] [--kill-after MS] -- PROGRAM [ARG...]
 *   jobs-supervise --check-user NAME      prints "uid gid" of NAME and exits 0 (1 if there is no such user)
 *   jobs-supervise --scrub VAR,VAR -- PROGRAM [ARG...]
 *       execs PROGRAM without those variables in its environment; their values wait in a pipe whose read end is
 *       the descriptor named by JOBS_SECRETS_FD (functions/config.ts reads and closes it at start). For a worker
 *       that is not root: its commands run as its own user and can read /proc/<pid>/environ of its process.
 *
 * Why a process of its own: the worker is Node, which can neither become a child subreaper nor run code between
 * fork and exec. This supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER), so every process the command starts
 * stays its descendant, even one that leaves the process group or the session (setsid, a double fork): when such a
 * process's parent exits, the kernel hands it to the supervisor instead of to init.
 *
 * Its standard input is a pipe from the worker, the control channel:
 *   'T'  terminate: SIGTERM to every descendant, SIGKILL to all of them --kill-after ms later
 *   'K'  kill every descendant now
 *   EOF  the worker is gone (it exited or was killed by any signal, SIGKILL included: the kernel closes its end of the
 *        pipe): every descendant is killed at once, long before the attempt's lease could expire.
 * When PROGRAM (the main process) exits, whatever it left behind is killed (SIGKILL) and reaped, and the supervisor
 * exits the way PROGRAM did (the same exit code, or the same signal), so the worker reads PROGRAM's status.
 *
 * With --user, PROGRAM runs as that user (its groups, HOME, USER and LOGNAME) with no_new_privs set, so neither it
 * nor anything it starts can gain privileges (setuid binaries), read the worker's /proc files or signal it.
 * The supervisor itself keeps the worker's user, so the job cannot kill it to escape.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static pid_t self;

static void fail(const char *what) {
  fprintf(stderr, "jobs-supervise: %s: %s\n", what, strerror(errno));
  _exit(127);
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* The parent pid from /proc/<pid>/stat (the field after the command name, which may itself hold spaces or ')'). */
static pid_t parent_of(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  char *end = strrchr(buf, ')');
  if (!end) return -1;
  char state;
  int ppid;
  if (sscanf(end + 1, " %c %d", &state, &ppid) != 2) return -1;
  return (pid_t)ppid;
}

struct proc { pid_t pid, ppid; int mine; };

static int contains(const struct proc *procs, size_t count, pid_t pid) {
  if (pid == self) return 1;
  for (size_t i = 0; i < count; i++) if (procs[i].pid == pid) return procs[i].mine;
  return 0;
}

/*
 * Sends `sig` to every descendant. Only the supervisor's own children are safe from pid reuse (they stay zombies
 * until reaped); a deeper descendant is signalled through a pidfd, after checking that the process the pidfd holds
 * still has a parent in the tree. Returns how many were signalled.
 */
static int signal_descendants(int sig) {
  DIR *dir = opendir("/proc");
  if (!dir) return 0;
  size_t count = 0, room = 256;
  struct proc *procs = malloc(room * sizeof *procs);
  struct dirent *entry;
  while (procs && (entry = readdir(dir))) {
    char *end;
    long pid = strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == self) continue;
    pid_t ppid = parent_of((pid_t)pid);
    if (ppid < 0) continue;
    if (count == room) {
      room *= 2;
      struct proc *grown = realloc(procs, room * sizeof *procs);
      if (!grown) break;
      procs = grown;
    }
    procs[count++] = (struct proc){ (pid_t)pid, ppid, 0 };
  }
  closedir(dir);
  if (!procs) return 0;
  /* Mark the tree below the supervisor: repeat until no process joins (a pass per level of depth). */
  for (int changed = 1; changed;) {
    changed = 0;
    for (size_t i = 0; i < count; i++) {
      if (!procs[i].mine && contains(procs, count, procs[i].ppid)) procs[i].mine = changed = 1;
    }
  }
  int signalled = 0;
  for (size_t i = 0; i < count; i++) {
    if (!procs[i].mine) continue;
    if (procs[i].ppid == self) {
      if (kill(procs[i].pid, sig) == 0) signalled++;
      continue;
    }
    int fd = (int)syscall(SYS_pidfd_open, procs[i].pid, 0);
    if (fd < 0) {
      if (errno == ENOSYS && kill(procs[i].pid, sig) == 0) signalled++;
      continue;
    }
    if (contains(procs, count, parent_of(procs[i].pid)) && syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) == 0) signalled++;
    close(fd);
  }
  free(procs);
  return signalled;
}

/* Kills and reaps every descendant. A process forked while this runs is orphaned to the supervisor when its parent
 * dies, so rescanning until no child is left catches it. */
static void kill_all_and_reap(pid_t main_pid, int *main_status, int *main_done) {
  for (;;) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid == main_pid) *main_status = status, *main_done = 1;
    }
    /* No child left means no descendant left (orphans are handed to us): the usual case costs no /proc scan. */
    if (pid < 0 && errno == ECHILD) return;
    signal_descendants(SIGKILL);
    struct timespec pause = { 0, 2 * 1000 * 1000 };
    nanosleep(&pause, NULL);
  }
}

static void run_as(const char *user) {
  struct passwd *pw = getpwnam(user);
  if (!pw) {
    fprintf(stderr, "jobs-supervise: no user named %s\n", user);
    _exit(127);
  }
  if (initgroups(pw->pw_name, pw->pw_gid) != 0) fail("initgroups");
  if (setgid(pw->pw_gid) != 0) fail("setgid");
  if (setuid(pw->pw_uid) != 0) fail("setuid");
  if (setuid(0) == 0 && pw->pw_uid != 0) {
    fprintf(stderr, "jobs-supervise: could not drop root\n");
    _exit(127);
  }
  setenv("HOME", pw->pw_dir, 1);
  setenv("USER", pw->pw_name, 1);
  setenv("LOGNAME", pw->pw_name, 1);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
}

/* Moves the listed variables from the environment into a pipe, then becomes PROGRAM (same pid, clean environ). */
static void exec_scrubbed(char *list, char **program) {
  int fds[2];
  if (pipe(fds) != 0) fail("pipe");
  size_t total = 0;
  for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
    const char *value = getenv(name);
    if (!value) continue;
    size_t n = strlen(name), v = strlen(value);
    total += n + v + 2;
    /* Written before anyone reads: more than a pipe holds would block for ever. */
    if (total > 60000) {
      fprintf(stderr, "jobs-supervise: the variables to scrub hold more than 60000 bytes\n");
      _exit(127);
    }
    if (write(fds[1], name, n) != (ssize_t)n || write(fds[1], "=", 1) != 1 || write(fds[1], value, v + 1) != (ssize_t)(v + 1)) fail("write");
    unsetenv(name);
  }
  close(fds[1]);
  char fd[16];
  snprintf(fd, sizeof fd, "%d", fds[0]);
  setenv("JOBS_SECRETS_FD", fd, 1);
  execvp(program[0], program);
  fail(program[0]);
}

static void exit_like(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  struct rlimit none = { 0, 0 };
  setrlimit(RLIMIT_CORE, &none);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  _exit(128 + sig);
}

int main(int argc, char **argv) {
  const char *user = NULL;
  char *scrub = NULL;
  long kill_after_ms = 2000;
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) { i++; break; }
    if (strcmp(argv[i], "--check-user") == 0 && i + 1 < argc) {
      struct passwd *pw = getpwnam(argv[i + 1]);
      if (!pw) {
        fprintf(stderr, "no user named %s\n", argv[i + 1]);
        return 1;
      }
      printf("%u %u\n", (unsigned)pw->pw_uid, (unsigned)pw->pw_gid);
      return 0;
    }
    if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) { user = argv[++i]; continue; }
    if (strcmp(argv[i], "--scrub") == 0 && i + 1 < argc) { scrub = argv[++i]; continue; }
    if (strcmp(argv[i], "--kill-after") == 0 && i + 1 < argc) { kill_after_ms = atol(argv[++i]); continue; }
    fprintf(stderr, "usage: jobs-supervise [--user NAME] [--kill-after MS] -- PROGRAM [ARG...]\n");
    return 127;
  }
  if (i >= argc) {
    fprintf(stderr, "usage: jobs-supervise [--user NAME] [--kill-after MS] -- PROGRAM [ARG...]\n");
    return 127;
  }
  if (scrub) exec_scrubbed(scrub, &argv[i]);
  self = getpid();
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) fail("subreaper");

  sigset_t handled, previous;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  sigaddset(&handled, SIGTERM);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGHUP);
  sigaddset(&handled, SIGQUIT);
  sigprocmask(SIG_BLOCK, &handled, &previous);
  int sfd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) fail("signalfd");
  signal(SIGPIPE, SIG_IGN);
  if (fcntl(0, F_SETFD, FD_CLOEXEC) != 0) fail("control pipe");

  pid_t main_pid = fork();
  if (main_pid < 0) fail("fork");
  if (main_pid == 0) {
    sigprocmask(SIG_SETMASK, &previous, NULL);
    signal(SIGPIPE, SIG_DFL);
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0) fail("stdin");
    if (null > 0) close(null);
    if (user) run_as(user);
    /* If the supervisor is killed (only its own user can), the main process goes with it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != self) _exit(127);
    execvp(argv[i], &argv[i]);
    fail(argv[i]);
  }

  int main_status = 0, main_done = 0, control_open = 1;
  long kill_at = -1;
  while (!main_done) {
    struct pollfd fds[2] = { { sfd, POLLIN, 0 }, { 0, POLLIN, 0 } };
    int timeout = -1;
    if (kill_at >= 0) {
      long left = kill_at - now_ms();
      timeout = left > 0 ? (int)left : 0;
    }
    int ready = poll(fds, control_open ? 2 : 1, timeout);
    if (ready < 0 && errno != EINTR) fail("poll");
    if (kill_at >= 0 && now_ms() >= kill_at) {
      signal_descendants(SIGKILL);
      kill_at = -1;
    }
    if (control_open && fds[1].revents) {
      char buf[64];
      ssize_t n = read(0, buf, sizeof buf);
      if (n <= 0) {
        /* The worker is gone: nothing of this attempt may run on. */
        control_open = 0;
        kill_all_and_reap(main_pid, &main_status, &main_done);
        break;
      }
      for (ssize_t k = 0; k < n; k++) {
        if (buf[k] == 'K') signal_descendants(SIGKILL);
        if (buf[k] == 'T' && kill_at < 0) {
          signal_descendants(SIGTERM);
          kill_at = now_ms() + kill_after_ms;
        }
      }
    }
    if (fds[0].revents) {
      struct signalfd_siginfo info;
      while (read(sfd, &info, sizeof info) == (ssize_t)sizeof info) {
        /* Someone asked the supervisor itself to stop: end the attempt as the worker's 'T' would. */
        if (info.ssi_signo != SIGCHLD && kill_at < 0) {
          signal_descendants(SIGTERM);
          kill_at = now_ms() + kill_after_ms;
        }
      }
      int status;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == main_pid) main_status = status, main_done = 1;
      }
    }
  }
  /* The attempt ends with its main process: whatever it left behind goes now. */
  kill_all_and_reap(main_pid, &main_status, &main_done);
  exit_like(main_status);
  return 0;
}
