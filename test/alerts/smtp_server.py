"""A real SMTP server for the email channel's tests (aiosmtpd): saves each message as <n>.json (from, to, subject,
the decoded text and HTML parts, whether the session used TLS, the login) in OUTDIR.
Usage: smtp_server.py PORT OUTDIR [CERT KEY] — with a certificate it requires STARTTLS, or with SMTP_MODE=tls speaks
TLS from the first byte (SMTPS); SMTP_AUTH=user:pass requires that login, SMTP_AUTH_CLEARTEXT=1 takes it without TLS
too (a careless server, so a client that sends its password in clear shows). Prints "ready" once it accepts connections."""
import json
import os
import ssl
import sys
import time
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

port, outdir = int(sys.argv[1]), sys.argv[2]
cert = sys.argv[3] if len(sys.argv) > 4 else None
key = sys.argv[4] if len(sys.argv) > 4 else None


class Saver:
    n = 0

    async def handle_DATA(self, server, session, envelope):
        msg = message_from_bytes(envelope.content, policy=policy.default)
        text, html = msg.get_body(('plain',)), msg.get_body(('html',))
        Saver.n += 1
        rec = {
            'from': envelope.mail_from, 'to': envelope.rcpt_tos, 'subject': str(msg['subject']), 'type': msg.get_content_type(),
            'text': text.get_content() if text else None, 'html': html.get_content() if html else None,
            'tls': session.ssl is not None or implicit, 'notification': str(msg['x-saltdeck-notification']),
            'login': session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
        }
        with open(os.path.join(outdir, f'{Saver.n}.json'), 'w') as f:
            json.dump(rec, f)
        return '250 OK'


WANT = os.environ.get('SMTP_AUTH', '')
implicit = os.environ.get('SMTP_MODE') == 'tls'


def authenticator(server, session, envelope, mechanism, data):
    ok = isinstance(data, LoginPassword) and f'{data.login.decode()}:{data.password.decode()}' == WANT
    return AuthResult(success=ok, handled=False, auth_data=data)


ctx = None
if cert:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
# On SMTPS the whole connection is TLS, but aiosmtpd only counts a STARTTLS session as such for AUTH.
cleartext = os.environ.get('SMTP_AUTH_CLEARTEXT') == '1'
auth = dict(authenticator=authenticator, auth_required=True, auth_require_tls=not (implicit or cleartext)) if WANT else {}
if implicit:
    controller = Controller(Saver(), hostname='127.0.0.1', port=port, ssl_context=ctx, server_hostname='127.0.0.1', **auth)
else:
    controller = Controller(Saver(), hostname='127.0.0.1', port=port, tls_context=ctx, require_starttls=ctx is not None, **auth)
controller.start()
print('ready', flush=True)
try:
    while True:
        time.sleep(3600)
except KeyboardInterrupt:
    controller.stop()
