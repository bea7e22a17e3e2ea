"""A real SMTP server for the email channel's tests (aiosmtpd): saves each message as <n>.json (from, to, subject,
the decoded text and HTML parts, whether the session used TLS) in OUTDIR. Usage: smtp_server.py PORT OUTDIR [CERT KEY]
(with a certificate it offers STARTTLS and requires it). Prints "ready" once it accepts connections."""
import json
import os
import ssl
import sys
import time
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller

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
            'tls': session.ssl is not None, 'notification': str(msg['x-saltdeck-notification']),
        }
        with open(os.path.join(outdir, f'{Saver.n}.json'), 'w') as f:
            json.dump(rec, f)
        return '250 OK'


ctx = None
if cert:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
controller = Controller(Saver(), hostname='127.0.0.1', port=port, tls_context=ctx, require_starttls=ctx is not None)
controller.start()
print('ready', flush=True)
try:
    while True:
        time.sleep(3600)
except KeyboardInterrupt:
    controller.stop()
