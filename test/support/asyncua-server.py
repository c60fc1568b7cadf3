"""An independent OPC UA server for the OPC UA link's tests: asyncua's, on 127.0.0.1.

usage: asyncua-server.py PORT [--secure PKI_DIR --trust CLIENT_CERT_PEM] [--user NAME:PASSWORD]

Serves ns "urn:klaxon:test" with Boiler.Temperature (Double 20.5), Boiler.Running (Boolean false)
and Boiler.Label (String). Without --secure the only endpoint is None/None; with it the only one
is Basic256Sha256 SignAndEncrypt, with the server's own certificate made in PKI_DIR, and a client
is let in only when its certificate is the one in CLIENT_CERT_PEM (read at each connection, so a
test can trust the client after a refused attempt, as an engineer does on a PLC). With --user,
a session is anonymous or has exactly that user name and password.

Reads commands on stdin, one per line: "set Boiler.Temperature 85.5" (numbers and true/false).
Prints "ready" once listening, "ok" after each command.
"""

import asyncio
import sys
from pathlib import Path

from asyncua import Server, ua
from asyncua.common.utils import ServiceError
from asyncua.crypto.permission_rules import User, UserRole
from asyncua.server.user_managers import UserManager
from asyncua.crypto.cert_gen import setup_self_signed_certificate
from asyncua.crypto.uacrypto import load_certificate
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID

NAMESPACE = "urn:klaxon:test"


async def trusted_only(trust_file: Path):
    async def validate(certificate, _app_description):
        try:
            trusted = await load_certificate(trust_file)
        except FileNotFoundError:
            trusted = None
        if trusted is None or trusted.public_bytes(Encoding.DER) != certificate.public_bytes(Encoding.DER):
            raise ServiceError(ua.StatusCodes.BadSecurityChecksFailed)

    return validate


class OneUser(UserManager):
    def __init__(self, name: str, password: str) -> None:
        self.name, self.password = name, password

    def get_user(self, iserver, username=None, password=None, certificate=None):
        if username is None or (username == self.name and password == self.password):
            return User(role=UserRole.User)
        return None


async def main() -> None:
    port = int(sys.argv[1])
    secure = "--secure" in sys.argv
    user = sys.argv[sys.argv.index("--user") + 1].split(":", 1) if "--user" in sys.argv else None
    server = Server(user_manager=OneUser(*user) if user else None)
    await server.init()
    server.set_endpoint(f"opc.tcp://127.0.0.1:{port}/klaxon-test")
    server.set_server_name("Klaxon test (asyncua)")
    if secure:
        pki = Path(sys.argv[sys.argv.index("--secure") + 1])
        trust = Path(sys.argv[sys.argv.index("--trust") + 1])
        pki.mkdir(parents=True, exist_ok=True)
        uri = "urn:klaxon:test:asyncua"
        await server.set_application_uri(uri)
        await setup_self_signed_certificate(
            pki / "server-key.pem",
            pki / "server-cert.der",
            uri,
            "127.0.0.1",
            [ExtendedKeyUsageOID.SERVER_AUTH],
            {"commonName": "Klaxon test server"},
        )
        await server.load_certificate(str(pki / "server-cert.der"))
        await server.load_private_key(str(pki / "server-key.pem"))
        server.set_security_policy([ua.SecurityPolicyType.Basic256Sha256_SignAndEncrypt])
        server.set_certificate_validator(await trusted_only(trust))
    else:
        server.set_security_policy([ua.SecurityPolicyType.NoSecurity])
    if user:
        server.set_identity_tokens([ua.AnonymousIdentityToken, ua.UserNameIdentityToken])
    idx = await server.register_namespace(NAMESPACE)
    boiler = await server.nodes.objects.add_object(ua.NodeId("Boiler", idx), "Boiler")
    nodes = {
        "Boiler.Temperature": await boiler.add_variable(ua.NodeId("Boiler.Temperature", idx), "Temperature", 20.5, ua.VariantType.Double),
        "Boiler.Running": await boiler.add_variable(ua.NodeId("Boiler.Running", idx), "Running", False, ua.VariantType.Boolean),
        "Boiler.Label": await boiler.add_variable(ua.NodeId("Boiler.Label", idx), "Label", "boiler one", ua.VariantType.String),
    }
    async with server:
        print("ready", flush=True)
        reader = asyncio.StreamReader()
        await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := (await reader.readline()).decode().strip():
            _, name, text = line.split(" ", 2)
            node = nodes[name]
            if text in ("true", "false"):
                await node.write_value(text == "true", ua.VariantType.Boolean)
            else:
                await node.write_value(float(text), ua.VariantType.Double)
            print("ok", flush=True)


asyncio.run(main())
