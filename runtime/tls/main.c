/* ward-tls — the TLS helper of one run that intercepts HTTPS (the protocol:
 * runtime/net/net-internal.h, "ward-tls, the TLS helper").
 *
 *     ward-tls [--upstream-ca FILE]      control socket on fd 3
 *
 * Started by the supervisor, never by a person. It makes the run's CA,
 * loads the trust store, gives up the filesystem and the network
 * (Landlock, where the kernel has it), says hello with the CA's
 * certificate, then takes jobs: each intercepted connection gets a thread
 * that makes the two handshakes at once and relays records to plaintext
 * and back. The control socket's end (the supervisor closed it, or died)
 * ends the process and every connection. */
#include "runtime/net/net-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <seccomp.h>

#include "runtime/tls/tls-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/landlock.h"

#define CTL_FD 3
/* Both handshakes, from the job's arrival: a total, not per read (a client
 * trickling its ClientHello a byte at a time gets no longer). */
#define HANDSHAKE_TIMEOUT_MS (30 * 1000)
/* A relay with no byte either way this long ends (the supervisor's own
 * deadlines end a connection sooner; this bounds a helper whose peer went
 * quiet on both legs). */
#define IDLE_TIMEOUT_MS (310 * 1000)
#define LEG_BUF (64 * 1024) /* four full TLS records' plaintext */
/* A leg that has carried LEG_GROW_AFTER bytes is a bulk transfer: its
 * buffers grow to LEG_BUF_BIG and its plaintext socket's send buffer to
 * LEG_SNDBUF_BIG, so that it hands the supervisor fewer, larger pieces, each
 * a wake-up less on both sides (with the supervisor's own, ~1.3 x an
 * intercepted download's throughput here). At most LEG_BIG_MAX legs at once:
 * a big leg may hold ~1.5 MiB more of the host's memory, which no cgroup of
 * the sandbox's bounds, and a sandbox opens many connections. */
#define LEG_GROW_AFTER (1 << 20)
#define LEG_BUF_BIG (256 * 1024)
#define LEG_SNDBUF_BIG (512 * 1024)
#define LEG_BIG_MAX 8

static int legs_big; /* legs grown now (atomic) */

static struct ward_tls *tls;

/* One TLS leg: the socket to a peer, its SSL, and the plaintext socket to
 * the supervisor. */
struct leg {
	SSL *ssl;
	int net, plain;
	bool tls_eof, plain_eof;     /* each side said it has no more */
	bool plain_shut, tls_shut;   /* the end passed on */
	bool dead;                   /* no more to do: ended, or a side failed */
	bool ending;                 /* the supervisor let go: what it wrote goes out, no more */
	bool ended;                  /* both sockets shut */
	short net_ev, plain_ev;      /* what the last step waits for */
	char *to_plain, *to_tls;     /* small[] until the leg grows */
	size_t cap;                  /* the size of each */
	uint64_t carried;            /* bytes moved, both ways */
	bool big;                    /* grown: counted in legs_big */
	size_t tp_off, tp_len, tt_off, tt_len;
	uint64_t plain_out, plain_in; /* bytes written to the supervisor, read from it */
	struct pass *pass;           /* the job's body pass (both legs share it) */
	bool server;                 /* the server's leg: it takes the supervisor's requests */
	bool ctl_ready;              /* the pass socket was readable at the last poll */
	bool tt_ring;                /* tt_len's bytes are the pass ring's, at its head */
	char small[2][LEG_BUF];
};

/* ---- a body passed inside the helper ----
 *
 * A long response body need not go through the supervisor: it asks (on the
 * job's fifth descriptor, net-internal.h "Passing a body") and the server's
 * leg then decrypts the body's bytes into a ring the client's leg encrypts
 * from, with no plaintext socket, no copy through the supervisor, and no
 * wake-up of it per piece. The supervisor relays what its plaintext already
 * holds (the helper says how much), and the client's leg sends what the
 * supervisor wrote before it, then the ring's bytes, then the supervisor's
 * again: the order on the client's side is the order of the server's. One
 * producer (the server's leg), one consumer (the client's), each on its own
 * thread or both on the job's: the ring's indices under a mutex, and a
 * wake-up (an eventfd) only for a side that said it waits. */
#define PASS_RING (512 * 1024)
#define PASS_MAX 8 /* rings at once, the helper's (the host's memory, as LEG_BIG_MAX) */
#define PASS_SIGNAL (64 * 1024) /* the reader woken every this many bytes at most */

static int passes; /* rings allocated now (atomic) */

static short want(SSL *s, int rc);

struct pass {
	pthread_mutex_t mu;
	int ctl;                /* the job's pass socket */
	int ev_data, ev_room;   /* eventfds: bytes for the client's leg; room for the server's */
	char *ring;             /* PASS_RING bytes, made at the first pass, freed with the job */
	/* under mu */
	bool active;            /* a body is passing */
	bool aborted;           /* the supervisor let go or broke the protocol: both legs end */
	bool s_short;           /* the server's leg ended before the body did */
	bool c_gone;            /* the client's leg ended during a pass */
	bool c_ended;           /* the client's leg ended: no pass from now on */
	bool data_waits, room_waits;
	size_t head, len;       /* the bytes in the ring */
	uint64_t b_target;      /* the client's leg reads the supervisor's plaintext up to here first */
	uint64_t c_left;        /* bytes the client's leg still writes from the ring */
	/* the server's leg's own */
	uint64_t s_left;        /* body bytes still to decrypt into the ring */
	bool ctl_eof;
	/* the client's leg's own */
	uint64_t passed;
};

static void pass_signal(int ev)
{
	uint64_t one = 1;

	if (write(ev, &one, sizeof(one)) < 0) {
		/* a counter that is full is a wake-up already pending */
	}
}

static void pass_drain_signal(int ev)
{
	uint64_t v;

	if (read(ev, &v, sizeof(v)) < 0) {
		/* nothing pending (EAGAIN) */
	}
}

/* Both legs end: the supervisor is gone, or asked what it may not. */
static void pass_abort(struct pass *p)
{
	pthread_mutex_lock(&p->mu);
	p->aborted = true;
	pthread_mutex_unlock(&p->mu);
	/* the supervisor, waiting for an answer, hears it at once */
	shutdown(p->ctl, SHUT_RDWR);
	pass_signal(p->ev_data);
	pass_signal(p->ev_room);
}

/* One of the pass's flags (p->active, p->aborted), read under its mutex. */
static bool pass_flag(struct pass *p, const bool *flag)
{
	bool v;

	pthread_mutex_lock(&p->mu);
	v = *flag;
	pthread_mutex_unlock(&p->mu);
	return v;
}

/* The client's leg has written the body, or cannot: the supervisor told. */
static void pass_done(struct pass *p, bool whole)
{
	struct ward_tls_pass r = { .kind = WARD_TLS_PASS_DONE, .ok = whole, .a = p->passed };

	pthread_mutex_lock(&p->mu);
	p->active = false;
	pthread_mutex_unlock(&p->mu);
	if (send(p->ctl, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(r))
		pass_abort(p);
}

/* The job's pass: false (no pass for this job, the supervisor's requests
 * refused by its socket's end) without the eventfds. */
static bool pass_init(struct pass *p, int ctl)
{
	memset(p, 0, sizeof(*p));
	p->ctl = ctl;
	p->ev_data = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->ev_room = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->ev_data < 0 || p->ev_room < 0 || pthread_mutex_init(&p->mu, NULL) != 0) {
		if (p->ev_data >= 0)
			close(p->ev_data);
		if (p->ev_room >= 0)
			close(p->ev_room);
		p->ev_data = p->ev_room = -1;
		p->ctl = -1;
		return false;
	}
	return true;
}

static void pass_free(struct pass *p)
{
	if (p->ctl < 0)
		return;
	close(p->ev_data);
	close(p->ev_room);
	pthread_mutex_destroy(&p->mu);
	if (p->ring) {
		free(p->ring);
		__atomic_sub_fetch(&passes, 1, __ATOMIC_RELAXED);
	}
	p->ctl = -1;
}

/* The server's leg: the supervisor's request, on a readable pass socket. A
 * body passes when what the supervisor has not read of this leg's
 * plaintext is all body (else it relays the body itself, as before) and a
 * ring can be had. */
static void pass_request(struct leg *l)
{
	struct pass *p = l->pass;
	struct ward_tls_pass q, r = { .kind = WARD_TLS_PASS_REFUSE };
	ssize_t n = recv(p->ctl, &q, sizeof(q), MSG_DONTWAIT);
	uint64_t k, take = 0;
	bool active, c_ended;

	l->ctl_ready = false;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	pthread_mutex_lock(&p->mu);
	active = p->active;
	pthread_mutex_unlock(&p->mu);
	if (n <= 0) {
		/* the supervisor is done with the connection: the legs end
		 * as they do (what it wrote still goes out, close_notify)
		 * unless a body is passing, which nobody waits for now */
		p->ctl_eof = true;
		if (active)
			pass_abort(p);
		return;
	}
	if (n != (ssize_t)sizeof(q) || q.kind != WARD_TLS_PASS || active || q.a > l->plain_out) {
		/* not what it may ask: refused by ending the connection */
		pass_abort(p);
		return;
	}
	k = l->plain_out - q.a; /* in the plaintext still: the supervisor's to relay */
	pthread_mutex_lock(&p->mu);
	c_ended = p->c_ended;
	pthread_mutex_unlock(&p->mu);
	if (l->tls_eof || l->ending || c_ended)
		/* the server's end already read (the body may be whole in the
		 * plaintext), or no client to pass it to: refused, the
		 * supervisor relays what there is, as before */
		k = UINT64_MAX;
	if (k <= q.len && !p->ring) {
		/* the ring, kept for the job's later bodies once made */
		if (__atomic_add_fetch(&passes, 1, __ATOMIC_RELAXED) > PASS_MAX ||
		    !(p->ring = malloc(PASS_RING)))
			__atomic_sub_fetch(&passes, 1, __ATOMIC_RELAXED);
	}
	if (k <= q.len && p->ring) {
		/* what this leg decrypted and has not handed over yet is the
		 * body's next part */
		p->s_left = q.len - k;
		take = l->tp_len < p->s_left ? l->tp_len : p->s_left;
		memcpy(p->ring, l->to_plain + l->tp_off, take);
		l->tp_off += take;
		l->tp_len -= take;
		p->s_left -= take;
		pthread_mutex_lock(&p->mu);
		p->active = true;
		p->s_short = p->c_gone = p->data_waits = p->room_waits = false;
		p->head = 0;
		p->len = take;
		p->b_target = q.b + k;
		p->c_left = q.len - k;
		p->passed = 0;
		pthread_mutex_unlock(&p->mu);
		r.kind = WARD_TLS_PASS_DRAIN;
		r.a = k;
	}
	if (send(p->ctl, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(r)) {
		pass_abort(p);
		return;
	}
	/* the client's leg hears of the pass now: it may have nothing else
	 * to wake it (the supervisor writes nothing more when it holds none
	 * of the body) */
	if (r.kind == WARD_TLS_PASS_DRAIN)
		pass_signal(p->ev_data);
}

/* The server's leg while a body passes: its records decrypted into the
 * ring, until the body is in or the ring full. Returns whether any moved. */
static bool pass_fill(struct leg *l)
{
	struct pass *p = l->pass;
	size_t unsignalled = 0;
	bool moved = false, wake = false;

	while (p->s_left) {
		size_t head, len, at, room;
		bool gone;
		int k;

		pthread_mutex_lock(&p->mu);
		head = p->head;
		len = p->len;
		gone = p->c_gone;
		if (len == PASS_RING)
			p->room_waits = true;
		pthread_mutex_unlock(&p->mu);
		if (gone) {
			/* the client's leg went away: the supervisor ends the
			 * connection when it hears */
			p->s_left = 0;
			break;
		}
		if (len == PASS_RING)
			break; /* until the client's leg makes room (ev_room) */
		at = (head + len) % PASS_RING;
		room = PASS_RING - len < PASS_RING - at ? PASS_RING - len : PASS_RING - at;
		if (room > p->s_left)
			room = (size_t)p->s_left;
		if (room > INT_MAX)
			room = INT_MAX;
		ERR_clear_error();
		k = SSL_read(l->ssl, p->ring + at, (int)room);
		if (k > 0) {
			pthread_mutex_lock(&p->mu);
			p->len += (size_t)k;
			unsignalled += (size_t)k;
			if (p->data_waits && (unsignalled >= PASS_SIGNAL || p->len == PASS_RING ||
					      (size_t)k == p->s_left)) {
				p->data_waits = false;
				wake = true;
				unsignalled = 0;
			}
			pthread_mutex_unlock(&p->mu);
			if (wake)
				pass_signal(p->ev_data);
			wake = false;
			p->s_left -= (uint64_t)k;
			l->carried += (uint64_t)k;
			moved = true;
			continue;
		}
		if (want(l->ssl, k)) {
			l->net_ev |= want(l->ssl, k);
		} else {
			/* the server ended (or failed) inside the body */
			l->tls_eof = moved = true;
			p->s_left = 0;
			pthread_mutex_lock(&p->mu);
			p->s_short = true;
			pthread_mutex_unlock(&p->mu);
		}
		break;
	}
	/* whoever waits hears of what came, and of the end */
	pthread_mutex_lock(&p->mu);
	if (p->data_waits && (unsignalled || p->s_short)) {
		p->data_waits = false;
		wake = true;
	}
	pthread_mutex_unlock(&p->mu);
	if (wake)
		pass_signal(p->ev_data);
	return moved;
}

/* The client's leg while a body passes: the next bytes to encrypt, from the
 * supervisor's plaintext up to where the body goes in, then from the ring.
 * Returns how many bytes of the supervisor's plaintext it may read now
 * (l->cap: as usual; 0: none, the ring's turn (tt_len set) or a wait for
 * the ring (ev_data)). */
static size_t pass_next(struct leg *l)
{
	struct pass *p = l->pass;
	size_t head, len, n;
	bool active, s_short;
	uint64_t target, left;

	pthread_mutex_lock(&p->mu);
	active = p->active;
	target = p->b_target;
	left = p->c_left;
	head = p->head;
	len = p->len;
	s_short = p->s_short;
	if (active && l->plain_in >= target && left && !len && !s_short)
		p->data_waits = true;
	pthread_mutex_unlock(&p->mu);
	if (!active)
		return l->cap;
	if (l->plain_in < target)
		return target - l->plain_in < l->cap ? (size_t)(target - l->plain_in) : l->cap;
	/* done (whole, or the server ended inside it): the supervisor's
	 * plaintext again, read in this same step (nothing else would wake
	 * the leg for it) */
	if (!left) {
		pass_done(p, true);
		return l->cap;
	}
	if (!len) {
		if (!s_short)
			return 0; /* data_waits set above */
		pass_done(p, false);
		return l->cap;
	}
	n = len < PASS_RING - head ? len : PASS_RING - head;
	if (n > left)
		n = (size_t)left;
	if (n > INT_MAX)
		n = INT_MAX;
	l->tt_ring = true;
	l->tt_off = 0;
	l->tt_len = n;
	return 0;
}

/* The ring's bytes the client's leg has written: their room back. */
static void pass_wrote(struct leg *l, size_t k)
{
	struct pass *p = l->pass;
	bool wake;

	pthread_mutex_lock(&p->mu);
	p->head = (p->head + k) % PASS_RING;
	p->len -= k;
	p->c_left -= k;
	wake = p->room_waits;
	p->room_waits = false;
	pthread_mutex_unlock(&p->mu);
	p->passed += k;
	if (wake)
		pass_signal(p->ev_room);
}

static void leg_init(struct leg *l, SSL *ssl, int net, int plain)
{
	l->ssl = ssl;
	l->net = net;
	l->plain = plain;
	l->to_plain = l->small[0];
	l->to_tls = l->small[1];
	l->cap = LEG_BUF;
}

/* A bulk leg's bigger buffers, between two steps when both are empty (and
 * while the budget allows; else it stays as it is). */
static void leg_grow(struct leg *l)
{
	int sz = LEG_SNDBUF_BIG;
	char *a, *b;

	if (l->big || l->carried < LEG_GROW_AFTER || l->tp_len || l->tt_len ||
	    BIO_wpending(SSL_get_wbio(l->ssl)) > 0)
		return;
	if (__atomic_add_fetch(&legs_big, 1, __ATOMIC_RELAXED) > LEG_BIG_MAX) {
		__atomic_sub_fetch(&legs_big, 1, __ATOMIC_RELAXED);
		return; /* asked again at the next step */
	}
	a = malloc(LEG_BUF_BIG);
	b = malloc(LEG_BUF_BIG);
	if (!a || !b) {
		free(a);
		free(b);
		__atomic_sub_fetch(&legs_big, 1, __ATOMIC_RELAXED);
		return;
	}
	l->to_plain = a;
	l->to_tls = b;
	l->cap = LEG_BUF_BIG;
	l->big = true;
	setsockopt(l->plain, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	/* empty (above): a new buffer loses nothing */
	BIO_set_write_buffer_size(SSL_get_wbio(l->ssl), LEG_BUF_BIG);
}

static void leg_free(struct leg *l)
{
	if (!l->big)
		return;
	free(l->to_plain);
	free(l->to_tls);
	l->to_plain = l->small[0];
	l->to_tls = l->small[1];
	l->cap = LEG_BUF;
	l->big = false;
	__atomic_sub_fetch(&legs_big, 1, __ATOMIC_RELAXED);
}

struct job {
	struct ward_tls_job j;
	/* client socket, server socket, client plaintext, server plaintext,
	 * the pass socket (a body passed inside the helper) */
	int fds[5];
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static short want(SSL *s, int rc)
{
	switch (SSL_get_error(s, rc)) {
	case SSL_ERROR_WANT_READ:
		return POLLIN;
	case SSL_ERROR_WANT_WRITE:
		return POLLOUT;
	default:
		return 0;
	}
}

/* The records in the write buffer out to the peer: true when none is left
 * (or the peer is gone: nothing more will go), else the leg waits for
 * room (POLLOUT). */
static bool leg_flush(struct leg *l)
{
	BIO *w = SSL_get_wbio(l->ssl);

	if (BIO_wpending(w) <= 0)
		return true;
	if (BIO_flush(w) == 1)
		return true;
	if (BIO_should_retry(w)) {
		l->net_ev |= POLLOUT;
		return false;
	}
	l->dead = true;
	return true;
}

/* One pass over a leg: move what can move without blocking. Returns whether
 * anything moved; sets the events it waits for. */
static bool leg_step(struct leg *l)
{
	bool moved = false;
	ssize_t n;
	int k;

	l->net_ev = l->plain_ev = 0;
	if (l->dead)
		return false;
	if (l->pass && pass_flag(l->pass, &l->pass->aborted)) {
		l->dead = true;
		return true;
	}
	leg_grow(l);
	if (l->server && l->pass) {
		if (l->ctl_ready)
			pass_request(l);
		if (l->pass->s_left)
			moved |= pass_fill(l);
	}
	/* the peer's records, decrypted, to the supervisor (once it has let
	 * go, nobody reads them: not read); the server's not while a body
	 * passes (s_left is its leg's own) */
	if (!l->tls_eof && !l->ending && l->tp_len == 0 &&
	    !(l->server && l->pass && l->pass->s_left)) {
		size_t got = 0;

		/* as many records as are there, up to the buffer: one write
		 * and one wake-up of the supervisor for them all */
		while (got < l->cap) {
			ERR_clear_error();
			k = SSL_read(l->ssl, l->to_plain + got, (int)(l->cap - got));
			if (k > 0) {
				got += (size_t)k;
				continue;
			}
			if (want(l->ssl, k)) {
				if (!got)
					l->net_ev |= want(l->ssl, k);
			} else {
				/* close_notify, or an end without it (the framing
				 * above says whether what came was whole), or a
				 * reset; what came before it goes first */
				l->tls_eof = moved = true;
			}
			break;
		}
		if (got) {
			l->tp_off = 0;
			l->tp_len = got;
			moved = true;
		}
	}
	if (l->tp_len && !l->ending) {
		n = write(l->plain, l->to_plain + l->tp_off, l->tp_len);
		if (n > 0) {
			l->tp_off += (size_t)n;
			l->tp_len -= (size_t)n;
			l->carried += (uint64_t)n;
			l->plain_out += (uint64_t)n;
			moved = true;
		} else if (n < 0 && errno == EAGAIN) {
			l->plain_ev |= POLLOUT;
		} else {
			/* the supervisor shut its end: what it wrote before is
			 * still to go out, the rest of this way is not wanted */
			l->ending = moved = true;
		}
	}
	if (l->ending)
		l->tp_len = 0;
	if ((l->tls_eof || l->ending) && !l->tp_len && !l->plain_shut) {
		shutdown(l->plain, SHUT_WR);
		l->plain_shut = moved = true;
	}
	/* the supervisor's plaintext, encrypted, to the peer: all of it, also
	 * after the supervisor let go (the end of a response is in it) */
	if (!l->plain_eof && l->tt_len == 0) {
		/* while a body passes, the supervisor's bytes up to where it
		 * goes in, then the ring's (pass_next()) */
		size_t most = l->pass && !l->server ? pass_next(l) : l->cap;

		n = most ? read(l->plain, l->to_tls, most) : 0;
		if (!most) {
			/* the ring's turn (tt_len set), or a wait for it */
		} else if (n > 0) {
			l->tt_off = 0;
			l->tt_len = (size_t)n;
			l->plain_in += (uint64_t)n;
			moved = true;
		} else if (n < 0 && errno == EAGAIN) {
			l->plain_ev |= POLLIN;
		} else if (l->pass && !l->server && pass_flag(l->pass, &l->pass->active)) {
			/* the supervisor let go before the body went in */
			pass_abort(l->pass);
			l->dead = true;
			return true;
		} else {
			l->plain_eof = moved = true;
		}
	}
	if (l->tt_len) {
		const char *from = l->tt_ring ? l->pass->ring + l->pass->head : l->to_tls;

		ERR_clear_error();
		k = SSL_write(l->ssl, from + l->tt_off, (int)l->tt_len);
		if (k > 0) {
			l->tt_off += (size_t)k;
			l->tt_len -= (size_t)k;
			l->carried += (uint64_t)k;
			if (l->tt_ring) {
				pass_wrote(l, (size_t)k);
				l->tt_off = 0;
				l->tt_ring = l->tt_len != 0;
			}
			moved = true;
		} else if (want(l->ssl, k)) {
			l->net_ev |= want(l->ssl, k);
		} else {
			l->dead = true; /* the peer went away */
			return true;
		}
	}
	/* what SSL_write (or SSL_read: an alert, a key update) left in the
	 * buffer goes out before the leg waits */
	if (!leg_flush(l) || l->dead)
		return moved || l->dead;
	if (l->plain_eof && !l->tt_len && !l->tls_shut) {
		/* close_notify, retried until it is out (or the peer is gone),
		 * and the buffer empty before the end of the stream */
		ERR_clear_error();
		k = SSL_shutdown(l->ssl);
		if (k < 0 && want(l->ssl, k)) {
			l->net_ev |= want(l->ssl, k);
		} else if (leg_flush(l)) {
			shutdown(l->net, SHUT_WR);
			l->tls_shut = moved = true;
		} else {
			/* the buffer went out in part: the next step writes
			 * the rest, SSL_shutdown() again is a no-op */
			moved = true;
		}
	}
	if (l->tls_shut && l->plain_shut)
		l->dead = true;
	return moved;
}

/* A leg ends: both its sockets shut, so that whoever is on the other side
 * sees it at once (the supervisor an end of its plaintext, the peer the
 * TCP end). */
static void leg_end(struct leg *l)
{
	shutdown(l->plain, SHUT_RDWR);
	shutdown(l->net, SHUT_RDWR);
	l->dead = true;
	if (l->pass) {
		struct pass *p = l->pass;
		bool active;

		pthread_mutex_lock(&p->mu);
		active = p->active;
		if (l->server && p->s_left)
			p->s_short = true; /* the body will not come whole */
		if (!l->server) {
			p->c_gone = active;
			p->c_ended = true;
		}
		pthread_mutex_unlock(&p->mu);
		if (l->server) {
			l->pass->s_left = 0;
			pass_signal(p->ev_data);
			/* nobody polls the pass socket from now on: a request
			 * the supervisor would make gets its end, not silence
			 * (one passing ends with the client leg's answer) */
			if (!active)
				shutdown(p->ctl, SHUT_RDWR);
		} else if (active) {
			pass_done(p, false);
			pass_signal(p->ev_room);
		}
	}
}

/* Relay the legs (one when the server's handshake failed) until each is
 * done or nothing moved for IDLE_TIMEOUT_MS. Each leg ends on its own: the
 * supervisor reads HTTP on both plaintexts and decides the connection's
 * life (a server's end is a response's end for it, still to be relayed to
 * the client). When the supervisor lets go of a leg (a hang-up on its
 * plaintext), what it wrote before still goes out, then close_notify.
 * With until_bulk, also until a leg has carried LEG_GROW_AFTER bytes: true
 * then, the legs in the middle of their relay, to go on where they are. */
static bool relay_until(struct leg *legs, size_t n, bool until_bulk)
{
	for (;;) {
		struct pollfd pfd[8]; /* each leg's: net, plain, its pass eventfd, the pass socket */
		size_t i, np = 0;
		bool moved = false, live = false;
		int k;

		for (i = 0; i < n; i++) {
			moved |= leg_step(&legs[i]);
			if (until_bulk && legs[i].carried >= LEG_GROW_AFTER)
				return true;
		}
		for (i = 0; i < n; i++) {
			if (legs[i].dead && !legs[i].ended) {
				leg_end(&legs[i]);
				legs[i].ended = true;
			}
			live |= !legs[i].dead;
		}
		if (!live)
			return false;
		if (moved)
			continue;
		for (i = 0; i < n; i++) {
			struct leg *l = &legs[i];

			if (l->dead)
				continue;
			/* a socket nobody waits on is left out: its hang-up would
			 * wake the loop for nothing. The plaintext stays in until
			 * the supervisor let go, so that its hang-up is seen. */
			pfd[np++] = (struct pollfd){ .fd = l->net_ev ? l->net : -1,
						     .events = l->net_ev };
			pfd[np++] = (struct pollfd){ .fd = l->plain_ev || !l->ending ? l->plain : -1,
						     .events = l->plain_ev };
			/* a pass: the ring's other side (room for the server's
			 * leg, bytes for the client's, and a pass's start), and
			 * (the server's leg) the supervisor's requests, or its end */
			pfd[np++] = (struct pollfd){ .fd = !l->pass	 ? -1 :
								   l->server ? l->pass->ev_room :
									       l->pass->ev_data,
						     .events = POLLIN };
			pfd[np++] = (struct pollfd){ .fd = l->server && l->pass && !l->pass->ctl_eof ?
								   l->pass->ctl :
								   -1,
						     .events = POLLIN };
		}
		k = poll(pfd, np, IDLE_TIMEOUT_MS);
		if (k == 0 || (k < 0 && errno != EINTR)) {
			/* ended as any other end: a pass hears of it */
			for (i = 0; i < n; i++)
				if (!legs[i].dead) {
					leg_end(&legs[i]);
					legs[i].ended = true;
				}
			return false;
		}
		for (i = 0, np = 0; k > 0 && i < n; i++) {
			if (legs[i].dead)
				continue;
			if (pfd[np + 1].fd >= 0 &&
			    (pfd[np + 1].revents & (POLLHUP | POLLERR | POLLNVAL)))
				legs[i].ending = true;
			if (pfd[np + 2].fd >= 0 && pfd[np + 2].revents)
				pass_drain_signal(pfd[np + 2].fd);
			if (pfd[np + 3].fd >= 0 && pfd[np + 3].revents)
				legs[i].ctl_ready = true;
			np += 4;
		}
	}
}

static void relay(struct leg *legs, size_t n)
{
	relay_until(legs, n, false);
}

static void *leg_main(void *arg)
{
	relay(arg, 1);
	ERR_clear_error();
	return NULL;
}

/* One side's handshake, until done, failed or past deadline (ms on the
 * monotonic clock): 1 done, 0 failed (the SSL's error queue says why), -1
 * timed out. */
static int handshake_one(SSL *s, int fd, bool server, long long deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd };
		long long left;
		int k;

		ERR_clear_error();
		k = server ? SSL_accept(s) : SSL_connect(s);
		if (k == 1)
			return 1;
		pfd.events = want(s, k);
		if (!pfd.events)
			return 0;
		left = (deadline - ward_now_ns()) / 1000000;
		if (left <= 0 || poll(&pfd, 1, (int)left) == 0)
			return -1;
	}
}

/* The server's handshake, in a thread of its own (see handshake()). */
struct up_handshake {
	SSL *up;
	int fd;
	long long deadline;
	int rc;
	char why[WARD_TLS_REASON_MAX];
};

static void *up_main(void *arg)
{
	struct up_handshake *u = arg;

	u->rc = handshake_one(u->up, u->fd, false, u->deadline);
	if (u->rc == 0)
		ward_tls_error(u->up, "TLS handshake with the server failed", u->why,
			       sizeof(u->why));
	ERR_clear_error();
	return NULL;
}

/* Both handshakes at once, within HANDSHAKE_TIMEOUT_MS: the server's in a
 * thread, the client's here, so that their CPU work (a key exchange each, a
 * signature made for the client, the server's verified) overlaps on two
 * CPUs rather than adding up — it is most of what interception adds to a
 * request. A client that fails its handshake is answered nothing: the
 * server's is cut short (its socket shut) and not finished for it. */
static void handshake(SSL *up, int up_fd, SSL *cl, int cl_fd, struct ward_tls_peer *peer,
		      struct ward_tls_status *st, const struct ward_tls_job *j)
{
	struct up_handshake u = { .up = up, .fd = up_fd, .rc = 0 };
	pthread_t th;
	bool threaded = false;
	int rc;

	u.deadline = ward_now_ns() + HANDSHAKE_TIMEOUT_MS * 1000000LL;
	if (!up)
		snprintf(st->upstream_reason, sizeof(st->upstream_reason), "out of memory");
	else
		threaded = pthread_create(&th, NULL, up_main, &u) == 0;
	rc = handshake_one(cl, cl_fd, true, u.deadline);
	if (rc == 1) {
		st->client_ok = true;
	} else if (rc < 0) {
		snprintf(st->client_reason, sizeof(st->client_reason),
			 "TLS handshake with the client timed out");
	} else if (peer->sni_refused) {
		st->sni_refused = 1;
		snprintf(st->sni, sizeof(st->sni), "%s", peer->sni);
		snprintf(st->client_reason, sizeof(st->client_reason),
			 "the client asked TLS for '%.150s', not the CONNECT host", peer->sni);
	} else {
		ward_tls_error(cl, "TLS handshake with the client failed", st->client_reason,
			       sizeof(st->client_reason));
	}
	if (!up)
		return;
	if (!st->client_ok)
		shutdown(up_fd, SHUT_RDWR);
	if (threaded)
		pthread_join(th, NULL);
	else if (st->client_ok)
		up_main(&u); /* no thread to be had: one after the other */
	if (!st->client_ok)
		snprintf(st->upstream_reason, sizeof(st->upstream_reason),
			 "%.60s port %u: the client's handshake failed first", j->host, j->port);
	else if (u.rc == 1)
		st->upstream_ok = true;
	else if (u.rc < 0)
		snprintf(st->upstream_reason, sizeof(st->upstream_reason),
			 "%.60s port %u: TLS handshake with the server timed out", j->host, j->port);
	else
		snprintf(st->upstream_reason, sizeof(st->upstream_reason), "%.60s port %u: %.150s",
			 j->host, j->port, u.why);
}

/* fd as the SSL's transport: read straight from (records read ahead,
 * runtime/tls/tls.c), written through a buffer that the handshake's flights
 * and each step flush: one write for many records, not one each (a record
 * is at most 16 KiB, and each write to a TCP socket wakes its reader).
 * LEG_BUF while the leg is small, LEG_BUF_BIG once grown. */
static bool set_bios(SSL *s, int fd)
{
	BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE), *buf = BIO_new(BIO_f_buffer());

	if (!sock || !buf || BIO_set_write_buffer_size(buf, LEG_BUF) != 1) {
		BIO_free(sock);
		BIO_free(buf);
		return false;
	}
	BIO_push(buf, sock);
	BIO_up_ref(sock); /* held by the SSL twice: its rbio, and under its wbio */
	SSL_set_bio(s, sock, buf);
	return true;
}

static void *job_main(void *arg)
{
	struct job *jb = arg;
	struct ward_tls_job *j = &jb->j;
	struct ward_tls_peer peer = { 0 };
	struct ward_tls_status st = { .protocol = WARD_TLS_PROTOCOL };
	struct leg *legs = NULL;
	struct pass pass;
	SSL *up = NULL, *cl = NULL;
	int i;

	for (i = 0; i < 5; i++)
		fcntl(jb->fds[i], F_SETFL, fcntl(jb->fds[i], F_GETFL) | O_NONBLOCK);
	j->host[sizeof(j->host) - 1] = '\0';
	snprintf(peer.host, sizeof(peer.host), "%s", j->host);
	peer.literal = j->literal;
	up = ward_tls_client(tls, j->host, j->literal);
	if (up && !set_bios(up, jb->fds[1])) {
		SSL_free(up);
		up = NULL;
	}
	cl = ward_tls_server(tls, &peer);
	if (!cl || !set_bios(cl, jb->fds[0])) {
		snprintf(st.client_reason, sizeof(st.client_reason), "out of memory");
		snprintf(st.upstream_reason, sizeof(st.upstream_reason), "out of memory");
	} else {
		handshake(up, jb->fds[1], cl, jb->fds[0], &peer, &st, j);
	}
	/* the status first, whole: the supervisor reads it before anything */
	{
		const char *b = (const char *)&st;
		size_t left = sizeof(st);

		while (left) {
			ssize_t n = write(jb->fds[3], b, left);
			struct pollfd pfd = { .fd = jb->fds[3], .events = POLLOUT };

			if (n > 0) {
				b += n;
				left -= (size_t)n;
			} else if (n < 0 && errno == EAGAIN && poll(&pfd, 1, HANDSHAKE_TIMEOUT_MS) > 0) {
				continue;
			} else {
				break;
			}
		}
		if (left)
			st.client_ok = 0; /* the supervisor is gone: nothing to relay */
	}
	if (st.client_ok) {
		legs = calloc(2, sizeof(*legs));
		if (legs) {
			pthread_t th;
			bool two;

			leg_init(&legs[0], cl, jb->fds[0], jb->fds[2]);
			leg_init(&legs[1], up, jb->fds[1], jb->fds[3]);
			legs[1].server = true;
			if (pass_init(&pass, jb->fds[4]))
				legs[0].pass = legs[1].pass = &pass;
			/* Both legs on this thread while the exchange is small
			 * (a request and its answer: a thread made for it would
			 * cost more than it saves); once one is a bulk transfer,
			 * a thread per leg: each has its own SSL, and a
			 * download's decryption (the server's leg) and encryption
			 * (the client's) overlap on two CPUs. */
			two = false;
			if (!st.upstream_ok)
				relay(legs, 1);
			else if (relay_until(legs, 2, true)) {
				two = pthread_create(&th, NULL, leg_main, &legs[1]) == 0;
				relay(legs, two ? 1 : 2);
			}
			if (two)
				pthread_join(th, NULL);
			leg_free(&legs[0]);
			leg_free(&legs[1]);
			pass_free(&pass);
		}
	}
	free(legs);
	SSL_free(cl);
	SSL_free(up);
	for (i = 0; i < 5; i++)
		close_fd(&jb->fds[i]);
	free(jb);
	ERR_clear_error();
	return NULL;
}

/* One job from the control socket: 1, 0 at its end, -1 on a malformed
 * message (dropped). */
static int take_job(void)
{
	struct job *jb = calloc(1, sizeof(*jb));
	pthread_attr_t attr;
	pthread_t th;
	size_t nfd = 0;
	ssize_t n;
	int i;

	if (!jb)
		return 0; /* out of memory: end, the supervisor sees it */
	n = ward_recv_fds(CTL_FD, &jb->j, sizeof(jb->j), jb->fds, 5, &nfd, 0);
	if (n <= 0) {
		for (i = 0; i < (int)nfd; i++)
			close(jb->fds[i]);
		free(jb);
		return 0;
	}
	if ((size_t)n != sizeof(jb->j) || jb->j.protocol != WARD_TLS_PROTOCOL || nfd != 5) {
		for (i = 0; i < (int)nfd; i++)
			close(jb->fds[i]);
		free(jb);
		return -1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, job_main, jb) != 0) {
		for (i = 0; i < 5; i++)
			close_fd(&jb->fds[i]); /* the supervisor reads no status: an error */
		free(jb);
	}
	pthread_attr_destroy(&attr);
	return 1;
}

/* What the helper does once it said hello, and nothing else: relay on the
 * descriptors it is given, make threads, allocate. Everything else fails
 * with EPERM (no socket(), connect() to a UNIX path, open, exec, ptrace,
 * kill...): seccomp covers what Landlock does not (UNIX and UDP sockets)
 * and holds where the kernel has no Landlock. */
static const char *const allowed_syscalls[] = {
	"read", "write", "readv", "writev", "recvmsg", "sendmsg", "recvfrom", "sendto",
	"poll", "ppoll", "close", "shutdown", "fcntl", "getsockopt", "setsockopt",
	"futex", "futex_waitv", "clone", "clone3", "set_robust_list", "rseq", "exit", "exit_group",
	"mmap", "munmap", "mprotect", "mremap", "madvise", "brk",
	"rt_sigprocmask", "rt_sigaction", "rt_sigreturn", "sigaltstack", "sched_yield", "sched_getaffinity",
	"getrandom", "clock_gettime", "clock_nanosleep", "nanosleep", "gettimeofday",
	"getpid", "gettid", "tgkill", "restart_syscall", "membarrier", "eventfd2",
};

static int confine_syscalls(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	size_t i;
	int rc = -1;

	if (!ctx)
		return -1;
	for (i = 0; i < sizeof(allowed_syscalls) / sizeof(allowed_syscalls[0]); i++) {
		int nr = seccomp_syscall_resolve_name(allowed_syscalls[i]);

		if (nr != __NR_SCMP_ERROR && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) < 0)
			goto out;
	}
	rc = seccomp_load(ctx) < 0 ? -1 : 0;
out:
	seccomp_release(ctx);
	return rc;
}

/* No filesystem, no TCP connect or bind, no signals or abstract sockets
 * outside: everything the kernel's Landlock ABI can handle, handled, and
 * nothing allowed; then the system calls above only. Without Landlock the
 * filter still holds. Returns -1 when the filter could not be loaded: the
 * helper then does not start (it parses hostile TLS on the host). */
static int give_up_the_system(void)
{
	struct {
		uint64_t fs, net, scoped;
	} attr;
	size_t size;
	int abi = ward_landlock_abi(NULL), fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	if (abi >= 1) {
		attr.fs = ward_landlock_fs_rights(abi);
		attr.net = ward_landlock_net_rights(abi);
		attr.scoped = ward_landlock_scopes(abi);
		size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
		fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0u);
		if (fd >= 0) {
			syscall(SYS_landlock_restrict_self, fd, 0u);
			close(fd);
		}
	}
	return confine_syscalls();
}

static int hello(bool ok, int32_t kind, int32_t errnum, const char *text)
{
	size_t tl = strlen(text);
	struct ward_tls_hello h = { .protocol = WARD_TLS_PROTOCOL,
				    .size = { sizeof(struct ward_tls_hello), sizeof(struct ward_tls_job),
					      sizeof(struct ward_tls_status) },
				    .ok = ok, .kind = kind, .errnum = errnum };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)text, tl } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	return sendmsg(CTL_FD, &mh, MSG_NOSIGNAL) == (ssize_t)(sizeof(h) + tl) ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct ward_error *err = NULL;
	const char *upstream_ca = NULL;
	sigset_t none;
	int type;
	socklen_t tl = sizeof(type);

	/* the control socket is fd 3; nothing else is ours to hold */
	syscall(SYS_close_range, CTL_FD + 1, ~0u, 0u);
	if (getsockopt(CTL_FD, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_SEQPACKET) {
		fprintf(stderr, "ward-tls: started by ward for a run that intercepts HTTPS, "
				"not by hand (fd 3 is not its control socket)\n");
		return 2;
	}
	if (argc == 3 && strcmp(argv[1], "--upstream-ca") == 0) {
		upstream_ca = argv[2];
	} else if (argc != 1) {
		hello(false, WARD_ERR_EXECUTION_FAILED, EINVAL, "ward-tls: unknown arguments");
		return 2;
	}
	/* the CA key: no core dump, no ptrace or /proc/PID/mem by the same user */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	tls = ward_tls_new(upstream_ca, &err);
	if (!tls) {
		hello(false, (int32_t)err->kind, err->code, err->message);
		return 1;
	}
	if (give_up_the_system() < 0) {
		hello(false, WARD_ERR_EXECUTION_FAILED, errno,
		      "ward-tls: cannot load its seccomp filter");
		return 1;
	}
	if (hello(true, 0, 0, ward_tls_ca_pem(tls)) < 0)
		return 1;
	while (take_job() != 0)
		;
	/* the supervisor is gone: every relay ends with the process */
	return 0;
}
