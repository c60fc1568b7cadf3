"""Sends mails to an SMTP server with Python's smtplib, as a device or a monitoring tool does.

Reads one JSON object on stdin: {"host", "port", "starttls": bool, "login": [user, password] | null,
"source": address to connect from | null, "mails": [...]}, each mail {"shape": "plain" | "html" | "multipart" | "raw8bit" | "raw", "from",
"to": [...], "subject", "text", "html", "attachment", "raw" (for "raw": the bytes as latin-1)}.
Prints one JSON line per mail: {"ok": true} or {"ok": false, "code": int, "error": text}.
All mails go over one connection, as a NAS sending a batch does.
"""
import json
import smtplib
import ssl
import sys
from email.message import EmailMessage


def build(mail):
    shape = mail["shape"]
    if shape == "raw":
        return mail["raw"].encode("latin-1")
    if shape == "raw8bit":
        # A device that writes UTF-8 straight into the headers and body, without MIME encoding.
        head = f"From: {mail['from']}\r\nTo: {', '.join(mail['to'])}\r\nSubject: {mail['subject']}\r\n"
        head += "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
        return (head + mail.get("text", "") + "\r\n").encode("utf-8")
    message = EmailMessage()
    message["From"] = mail["from"]
    message["To"] = ", ".join(mail["to"])
    message["Subject"] = mail["subject"]
    if shape == "plain":
        message.set_content(mail.get("text", ""))
    elif shape == "html":
        message.set_content(mail["html"], subtype="html")
    else:
        message.set_content(mail.get("text", ""))
        message.add_alternative(mail["html"], subtype="html")
    if mail.get("attachment"):
        message.add_attachment(mail["attachment"].encode("utf-8"), maintype="application",
                               subtype="octet-stream", filename="report.bin")
    return message.as_bytes()


def main():
    request = json.load(sys.stdin)
    source = (request["source"], 0) if request.get("source") else None
    with smtplib.SMTP(request["host"], request["port"], timeout=20, source_address=source) as client:
        client.ehlo("nas.plant.lan")
        if request.get("starttls"):
            context = ssl.create_default_context(cafile=request.get("ca_file"))
            context.check_hostname = False
            client.starttls(context=context)
            client.ehlo("nas.plant.lan")
        if request.get("login"):
            user, password = request["login"]
            try:
                client.login(user, password)
            except smtplib.SMTPAuthenticationError as error:
                print(json.dumps({"ok": False, "code": error.smtp_code, "error": error.smtp_error.decode()}))
                return
        for mail in request["mails"]:
            try:
                options = ["BODY=8BITMIME"] if mail["shape"] == "raw8bit" else []
                client.sendmail(mail["from"], mail["to"], build(mail), mail_options=options)
                print(json.dumps({"ok": True}), flush=True)
            except smtplib.SMTPRecipientsRefused as error:
                code, text = next(iter(error.recipients.values()))
                print(json.dumps({"ok": False, "code": code, "error": text.decode()}), flush=True)
            except smtplib.SMTPResponseException as error:
                print(json.dumps({"ok": False, "code": error.smtp_code, "error": error.smtp_error.decode()}), flush=True)
                client.rset()


main()
