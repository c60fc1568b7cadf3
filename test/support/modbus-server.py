"""An independent Modbus device for the tests: pymodbus's server (TCP, or RTU on a serial port).

Usage: modbus-server.py (--tcp PORT | --serial PATH [--baud N --parity N|E|O]) [--unit ID]
Every table (coils, discrete inputs, holding and input registers) holds addresses 0-199, all 0.
Commands on stdin, one a line (the answer "ok" on stdout):
  set <co|di|hr|ir> <address> <value>      a bit (0/1) or a raw 16-bit register
  fail <co|di|hr|ir> <address> <code>      reads covering it answer Modbus exception <code>
  heal                                     no more exceptions
It prints "ready" once it listens.
"""

import argparse
import asyncio
import sys

from pymodbus.constants import ExcCodes
from pymodbus.server import ModbusSerialServer, ModbusTcpServer
from pymodbus.simulator import DataType, SimData, SimDevice
from pymodbus.simulator.simutils import SimUtils

SIZE = 200
FUNCTIONS = {"co": (1, 5, 15), "di": (2,), "hr": (3, 6, 16), "ir": (4,)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tcp", type=int)
    parser.add_argument("--serial")
    parser.add_argument("--baud", type=int, default=9600)
    parser.add_argument("--parity", default="N")
    parser.add_argument("--unit", type=int, default=1)
    args = parser.parse_args()
    failing: dict[tuple[str, int], int] = {}
    values: dict[str, list[int]] = {table: [0] * SIZE for table in FUNCTIONS}

    async def action(function_code, _start, address, count, registers, set_values):
        table = next(name for name, codes in FUNCTIONS.items() if function_code in codes)
        for (failing_table, failing_address), code in failing.items():
            if failing_table == table and address <= failing_address < address + count:
                return ExcCodes(code)
        if set_values is None and table in ("hr", "ir"):
            registers[address : address + count] = values[table][address : address + count]
        elif set_values is None:
            # Bits are kept 16 to a register: pymodbus passes how many registers it will read
            # (`count`), from register address // 16, taking bits from bit address % 16 on.
            first = address - address % 16
            wanted = [bool(v) for v in values[table][first : first + count * 16]]
            wanted += [False] * (count * 16 - len(wanted))
            registers[first // 16 : first // 16 + count] = SimUtils.bitsToRegisters(wanted)
        return None

    bits = [SimData(0, values=[False] * 16 * (SIZE + 16), datatype=DataType.BITS)]
    regs = [SimData(0, count=SIZE, values=0, datatype=DataType.REGISTERS)]
    device = SimDevice(id=args.unit, simdata=(bits, bits, regs, regs), action=action)
    async def commands(server) -> None:
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            words = line.split()
            if words[0] == "set":
                values[words[1]][int(words[2])] = int(words[3])
            elif words[0] == "fail":
                failing[(words[1], int(words[2]))] = int(words[3])
            elif words[0] == "heal":
                failing.clear()
            print("ok", flush=True)
        await server.shutdown()

    async def run() -> None:
        if args.tcp is not None:
            server = ModbusTcpServer(device, address=("127.0.0.1", args.tcp))
        else:
            server = ModbusSerialServer(
                device, port=args.serial, baudrate=args.baud, parity=args.parity, stopbits=1, bytesize=8
            )
        await server.serve_forever(background=True)
        print("ready", flush=True)
        await commands(server)

    asyncio.run(run())


if __name__ == "__main__":
    main()
