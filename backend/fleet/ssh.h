/*
 * ssh.h: the pieces of the SSH launcher, shared by its files
 * (launcher-ssh.c: session, host key, login, exec; ssh-pump.c: the thread
 * that joins the exec channel to a socketpair; ssh-push.c: which hunter
 * runs on the node, and copying this one there; ssh-cmd.c: the remote
 * command line) and by the unit tests.
 */
#ifndef HUNTER_FLEET_SSH_H
#define HUNTER_FLEET_SSH_H

#include <stddef.h>

#include <libssh/libssh.h>

/* Where --push puts this binary, under the home directory the node's
 * SFTP server starts in, with the build id as one path component. */
#define SSH_PUSH_DIR	".local/lib/hunter"

/* Quote s as one word for a POSIX shell: '...' with each ' written as
 * '\''.  0, or -1 when dst (len bytes) is too small. */
int	fleet_ssh_quote(char *dst, size_t len, const char *s);
/* The command that runs the node's agent on stdio, every argument quoted:
 * EXE agent --stdio --node NAME --dir DIR --idle-exit S.  0 or -1. */
int	fleet_ssh_command(char *dst, size_t len, const char *exe,
	    const char *node, const char *dir, int idle_exit_s);
/* A build id as one path component: [A-Za-z0-9._-] kept, anything else
 * '_', a leading '.' or '-' too, "unknown" when empty. */
void	fleet_ssh_build_dir(char *dst, size_t len, const char *build);

/* Choose the hunter to run on the node: the pushed copy of this build if
 * it is there, else "hunter" from the PATH, unless fleet_push is set and
 * that one is missing or another build: then copy this binary over SFTP
 * and use the copy.  0 with exe set, or -1 with err naming the node. */
int	fleet_ssh_remote_exe(ssh_session, const char *node, char *exe,
	    size_t exelen, char *err, size_t errlen);

/* Start a thread that moves bytes between the channel and a socketpair;
 * it owns session and channel from then on and frees them when either
 * side closes.  Returns the other end of the socketpair, or -1 with err
 * (session and channel are then the caller's still). */
int	fleet_ssh_pump_start(ssh_session, ssh_channel, const char *node,
	    char *err, size_t errlen);
/* Wait (a few seconds at most) for the pumps of closed links to end. */
void	fleet_ssh_quiesce(void);

#endif
