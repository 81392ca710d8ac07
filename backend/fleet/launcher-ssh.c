/*
 * launcher-ssh.c: nodes reached over SSH (any host but "local"), with
 * libssh, one session per node.  Host, port and user come from the
 * cluster file, then the ssh config (the cluster's ssh.config, else
 * ~/.ssh/config) fills in what it leaves out.  The host key must be in
 * known_hosts (the cluster's ssh.known_hosts, else the user's): an unknown
 * key is refused with its fingerprint unless fleet_accept_new_hostkeys is
 * set, and a changed one is always refused.  Login: ssh-agent first, then
 * the cluster's ssh.identity, else the default keys.  Then an exec channel
 * runs `hunter agent --stdio` on the node, which attaches to (or starts)
 * the node's agent daemon, and ssh-pump.c joins the channel to an fd.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libssh/libssh.h>

#include "backend/fleet/fleet.h"
#include "backend/fleet/ssh.h"

/* Seconds for the TCP connect and each blocking libssh exchange. */
#define SSH_TIMEOUT_S		10
/* TCP keepalive: a host that vanishes is noticed in about 30 s. */
#define SSH_KEEPIDLE_S		15
#define SSH_KEEPINTVL_S		5
#define SSH_KEEPCNT		3

static bool
ssh_match(const struct node_spec *n)
{
	return strcmp(n->host, "local") != 0;
}

/* The host and port the session connects to (after the ssh config). */
static unsigned int
ssh_host_port(ssh_session s, const struct node_spec *n, char *host,
    size_t len)
{
	unsigned int	 port = 22;
	char		*h = NULL;

	ssh_options_get_port(s, &port);
	if (ssh_options_get(s, SSH_OPTIONS_HOST, &h) != SSH_OK)
		h = NULL;
	snprintf(host, len, "%s", h != NULL ? h : n->host);
	ssh_string_free_char(h);
	return port;
}

/* "host" or "[host]:port", as known_hosts and ssh-keygen -R write it. */
static void
ssh_where(ssh_session s, const struct node_spec *n, char *buf, size_t len)
{
	char		 host[256];
	unsigned int	 port = ssh_host_port(s, n, host, sizeof host);

	if (port == 22)
		snprintf(buf, len, "%s", host);
	else
		snprintf(buf, len, "[%s]:%u", host, port);
}

/* Options from the cluster file win over the ssh config, as ssh's own
 * command line does: the config is read first, the file's values after. */
static int
ssh_setup(ssh_session s, const struct fleet_node *fn, char *err, size_t errlen)
{
	const struct node_spec		*n = fn->spec;
	const struct cluster_spec	*c = fn->cluster;
	const char			*config = NULL;
	long				 timeout = SSH_TIMEOUT_S;
	bool				 no = false;

	if (c != NULL && c->ssh.config[0] != '\0') {
		config = c->ssh.config;
		if (access(config, R_OK) != 0) {
			snprintf(err, errlen, "ssh config %s: %s", config,
			    strerror(errno));
			return -1;
		}
	}
	if (ssh_options_set(s, SSH_OPTIONS_HOST, n->host) != SSH_OK ||
	    ssh_options_parse_config(s, config) != 0 ||
	    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no) != SSH_OK ||
	    ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) != SSH_OK)
		goto fail;
	if (n->port != 0 && ssh_options_set(s, SSH_OPTIONS_PORT, &n->port) !=
	    SSH_OK)
		goto fail;
	if (n->user[0] != '\0' && ssh_options_set(s, SSH_OPTIONS_USER,
	    n->user) != SSH_OK)
		goto fail;
	if (c != NULL && c->ssh.known_hosts[0] != '\0' &&
	    (ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, c->ssh.known_hosts) !=
	    SSH_OK || ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS,
	    "/dev/null") != SSH_OK))
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "ssh options (%s%s): %s",
	    config != NULL ? "config " : "default config",
	    config != NULL ? config : "", ssh_get_error(s));
	return -1;
}

/* Which known_hosts file the session checks, for messages. */
static void
ssh_known_hosts_file(ssh_session s, const struct fleet_node *fn, char *buf,
    size_t len)
{
	if (fn->cluster != NULL && fn->cluster->ssh.known_hosts[0] != '\0')
		snprintf(buf, len, "%s", fn->cluster->ssh.known_hosts);
	else
		snprintf(buf, len, "~/.ssh/known_hosts");
}

static int
ssh_check_host_key(ssh_session s, const struct fleet_node *fn, char *err,
    size_t errlen)
{
	const char	*name = fn->spec->name;
	ssh_key		 key = NULL;
	unsigned char	*hash = NULL;
	size_t		 hlen = 0;
	char		*fp = NULL, where[300], file[1100];
	const char	*type = "";
	int		 rc = -1;
	enum ssh_known_hosts_e known;

	ssh_where(s, fn->spec, where, sizeof where);
	ssh_known_hosts_file(s, fn, file, sizeof file);
	if (ssh_get_server_publickey(s, &key) != SSH_OK ||
	    ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash,
	    &hlen) != 0) {
		snprintf(err, errlen, "no host key from %s: %s",
		    where, ssh_get_error(s));
		goto out;
	}
	fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	type = ssh_key_type_to_char(ssh_key_type(key));
	known = ssh_session_is_known_server(s);
	switch (known) {
	case SSH_KNOWN_HOSTS_OK:
		rc = 0;
		break;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		snprintf(err, errlen, "HOST KEY CHANGED for node %s at %s: it "
		    "now offers %s key %s, which is not the key %s holds for "
		    "it.  Someone may be intercepting the connection, or the "
		    "host was reinstalled.  hunter refuses it, even with "
		    "--accept-new-hostkeys; if the change is expected, remove "
		    "the old entry (ssh-keygen -R '%s' -f %s) and check the "
		    "new fingerprint", name, where, type, fp ? fp : "?", file,
		    where, file);
		break;
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		if (!fleet_accept_new_hostkeys) {
			char		 host[256];
			unsigned int	 port = ssh_host_port(s, fn->spec, host,
			    sizeof host);

			snprintf(err, errlen, "unknown host key for node %s at %s "
			    "(%s %s) is not in %s; refusing it.  If the "
			    "fingerprint is right, accept it with `hunter check "
			    "--accept-new-hostkeys`, or with `ssh-keyscan -p %u "
			    "%s >> %s`", name, where, type, fp ? fp : "?", file,
			    port, host, file);
			break;
		}
		if (ssh_session_update_known_hosts(s) != SSH_OK) {
			snprintf(err, errlen, "cannot add the host key "
			    "of %s to %s: %s", where, file,
			    ssh_get_error(s));
			break;
		}
		fprintf(stderr, "hunter: node %s: added the host key of %s "
		    "(%s %s) to %s\n", name, where, type, fp ? fp : "?", file);
		rc = 0;
		break;
	default:
		snprintf(err, errlen, "cannot check the host key of "
		    "%s against %s: %s", where, file, ssh_get_error(s));
		break;
	}
out:
	ssh_string_free_char(fp);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return rc;
}

/* ssh-agent, then the cluster's identity, else the default keys. */
static int
ssh_login(ssh_session s, const struct fleet_node *fn, char *err,
    size_t errlen)
{
	const char	*identity = fn->cluster != NULL ?
	    fn->cluster->ssh.identity : "";
	char		*user = NULL, where[300];
	ssh_key		 key = NULL;
	int		 rc;

	if ((rc = ssh_userauth_agent(s, NULL)) == SSH_AUTH_SUCCESS)
		return 0;
	if (rc != SSH_AUTH_ERROR && identity[0] != '\0') {
		if (ssh_pki_import_privkey_file(identity, NULL, NULL, NULL,
		    &key) != SSH_OK) {
			snprintf(err, errlen, "cannot read the identity "
			    "%s (a key with a passphrase must be loaded into "
			    "ssh-agent)", identity);
			return -1;
		}
		rc = ssh_userauth_publickey(s, NULL, key);
		ssh_key_free(key);
	} else if (rc != SSH_AUTH_ERROR)
		rc = ssh_userauth_publickey_auto(s, NULL, NULL);
	if (rc == SSH_AUTH_SUCCESS)
		return 0;
	ssh_where(s, fn->spec, where, sizeof where);
	if (ssh_options_get(s, SSH_OPTIONS_USER, &user) != SSH_OK)
		user = NULL;
	if (rc == SSH_AUTH_ERROR)
		snprintf(err, errlen, "login to %s failed: %s", where,
		    ssh_get_error(s));
	else
		snprintf(err, errlen, "%s@%s refused every key (tried "
		    "ssh-agent and %s)", user ? user : "?",
		    where, identity[0] != '\0' ? identity : "the default keys");
	ssh_string_free_char(user);
	return -1;
}

/* Notice a host that vanished without a FIN. */
static void
ssh_keepalive(ssh_session s)
{
	int	 fd = ssh_get_fd(s), on = 1, idle = SSH_KEEPIDLE_S,
		 intvl = SSH_KEEPINTVL_S, cnt = SSH_KEEPCNT;

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
}

static int
ssh_connect_node(struct fleet_node *fn, const char *exe, char *err,
    size_t errlen)
{
	const char	*name = fn->spec->name;
	ssh_session	 s;
	ssh_channel	 ch = NULL;
	char		 where[300], remote[4096], cmd[16384];
	int		 fd;

	(void)exe;	/* --push copies /proc/self/exe, see ssh-push.c */
	if ((s = ssh_new()) == NULL) {
		snprintf(err, errlen, "ssh_new failed");
		return -1;
	}
	if (ssh_setup(s, fn, err, errlen) != 0)
		goto fail;
	if (ssh_connect(s) != SSH_OK) {
		ssh_where(s, fn->spec, where, sizeof where);
		snprintf(err, errlen, "cannot reach %s: %s%s", where,
		    ssh_get_error(s), spec_host_hint(fn->spec->host));
		goto fail;
	}
	fn->stage = FLEET_REACHED;
	ssh_keepalive(s);
	if (ssh_check_host_key(s, fn, err, errlen) != 0)
		goto fail;
	fn->stage = FLEET_TRUSTED;
	if (ssh_login(s, fn, err, errlen) != 0)
		goto fail;
	fn->stage = FLEET_AUTHED;
	if (fleet_ssh_remote_exe(s, name, remote, sizeof remote, err,
	    errlen) != 0)
		goto fail;
	if (fleet_ssh_command(cmd, sizeof cmd, remote, name, fn->dir,
	    fleet_agent_idle_exit) != 0) {
		snprintf(err, errlen, "the remote command is too long");
		goto fail;
	}
	if ((ch = ssh_channel_new(s)) == NULL ||
	    ssh_channel_open_session(ch) != SSH_OK ||
	    ssh_channel_request_exec(ch, cmd) != SSH_OK) {
		snprintf(err, errlen, "cannot run `%s agent --stdio` "
		    "there: %s", remote, ssh_get_error(s));
		goto fail;
	}
	if ((fd = fleet_ssh_pump_start(s, ch, name, err, errlen)) < 0)
		goto fail;
	return fd;
fail:
	if (ch != NULL)
		ssh_channel_free(ch);
	ssh_disconnect(s);
	ssh_free(s);
	return -1;
}

const struct launcher launcher_ssh = {
	.name = "ssh",
	.match = ssh_match,
	.connect = ssh_connect_node,
	.quiesce = fleet_ssh_quiesce,
};
