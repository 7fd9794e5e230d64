/*
 * auth.h - mutual challenge/response on the per-job key.
 *
 * Every connection of a job (rank to launcher, rank to rank) opens with:
 *
 *   acceptor  -> connector : "SDSMA1\0\0" nonce_a[16]                    (24 B)
 *   connector -> acceptor  : "SDSMC1\0\0" u32 rank u32 0 nonce_c[16]
 *                            proof_c[32]                                 (64 B)
 *   acceptor  -> connector : "SDSMOK\0\0" proof_s[32]                    (40 B)
 *
 * proof_c = HMAC(key, "sdsm-c" nonce_a nonce_c rank), proof_s likewise with
 * "sdsm-s".  The key never crosses the wire; fresh nonces on both sides stop
 * replays.  An acceptor that sees a bad proof closes the socket.
 *
 * The connector sends the first 8 bytes of its hello (the magic, which
 * depends on nothing it has to read) as soon as it is connected, before the
 * acceptor's hello: the bytes on the wire are the same, but a segment goes
 * out at once.  When the last ACK of the TCP handshake is lost, the
 * acceptor's side is not connected, and it would neither accept nor speak
 * until its kernel sent the SYN-ACK again, 1 s later; the segment carries
 * the ACK again, and is itself sent again after the retransmission floor
 * if it is lost (net/tcpopt.h).
 */
#ifndef SDSM_NET_AUTH_H
#define SDSM_NET_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define SDSM_KEY_BYTES        32
#define SDSM_AUTH_HELLO_A_LEN 24
#define SDSM_AUTH_HELLO_C_LEN 64
#define SDSM_AUTH_OK_LEN      40

/* Random key as 64 hex characters plus NUL.  0 or SDSM_ESYS (errno says why). */
int sdsm_auth_key_generate(char hex[2 * SDSM_KEY_BYTES + 1]);
/* Parse 64 hex characters.  0 or SDSM_EINVAL. */
int sdsm_auth_key_parse(const char *hex, uint8_t key[SDSM_KEY_BYTES]);
void sdsm_auth_nonce(uint8_t nonce[16]);

/* Pure message builders/checkers, for event-driven acceptors (the launcher). */
void sdsm_auth_hello_a(uint8_t out[SDSM_AUTH_HELLO_A_LEN], const uint8_t nonce_a[16]);
/* Checks a connector's hello; on success stores its rank and its nonce. 0 or SDSM_EAUTH. */
int sdsm_auth_check_hello_c(const uint8_t key[SDSM_KEY_BYTES], const uint8_t nonce_a[16],
                            const uint8_t in[SDSM_AUTH_HELLO_C_LEN], uint32_t *rank, uint8_t nonce_c[16]);
/* Whether the first len bytes received could begin a connector's hello, so an
 * event-driven acceptor can drop junk at its first wrong byte. */
int sdsm_auth_hello_c_plausible(const uint8_t *in, size_t len);
void sdsm_auth_ok(uint8_t out[SDSM_AUTH_OK_LEN], const uint8_t key[SDSM_KEY_BYTES], const uint8_t nonce_a[16],
                  const uint8_t nonce_c[16], uint32_t rank);

/*
 * Blocking helpers on a connected socket (blocking or not), each bounded by
 * timeout_ms in total.  Return 0, SDSM_EAUTH on a failed proof,
 * SDSM_ETIMEDOUT, SDSM_EPEER when the other end closed (EOF) or broke the
 * connection, or SDSM_ESYS.  On failure errno says why, for the caller's %m
 * (this file logs nothing: sdsmrun links it too): EACCES for a failed proof,
 * ETIMEDOUT, ECONNRESET for EOF, else the failed call's own.
 */
int sdsm_auth_connector(int fd, const uint8_t key[SDSM_KEY_BYTES], uint32_t rank, int timeout_ms);
int sdsm_auth_acceptor(int fd, const uint8_t key[SDSM_KEY_BYTES], uint32_t *rank, int timeout_ms);

/* Read/write exactly len bytes before a deadline (CLOCK_MONOTONIC ms).
 * 0, SDSM_ETIMEDOUT, SDSM_EPEER or SDSM_ESYS, errno set as above. */
int sdsm_io_read_full(int fd, void *buf, size_t len, int64_t deadline_ms);
int sdsm_io_write_full(int fd, const void *buf, size_t len, int64_t deadline_ms);
int64_t sdsm_io_now_ms(void);

#endif
