#!/usr/bin/env python3
"""What the Apple workflow (.github/workflows/apple.yml) decides outside Xcode, kept here so that Linux
tests it: the workflow runs only on GitHub's macOS runners, this script everywhere.

Subcommands; each reads its input from a file, or from standard input when the file is `-`:

  xcode [LISTING]      the newest released Xcode (at least 26.0, for tools-version 6.2) of a
                       listing of /Applications (`ls /Applications`); prints its path. A runner
                       image drops point releases, so the workflow pins none.
  simulator --platform P [--sdks SDKS] [SIMCTL]
                       a simulator of P (iOS, tvOS, watchOS, visionOS) from `xcrun simctl list -j`:
                       the newest available runtime at or above the package's floor and, given
                       `xcodebuild -showsdks -json`, not newer than the Xcode's simulator SDK; an
                       existing device of it, else the device type to create. Prints key=value
                       lines for $GITHUB_OUTPUT: runtime, runtime_name, device_type, device_name,
                       udid (empty: none exists, create one), destination_platform.
  summary --platform P [SUMMARY]
                       the counts of `xcrun xcresulttool get test-results summary` (passed,
                       failed, skipped); fails when a test failed or none passed.

With no arguments it checks the workflow itself: every call of this script in it parses, its
platforms are the ones known here with the floors of Package.swift, and it pins no Xcode.
`--self-test` runs every subcommand on fixtures (a `simctl list -j` of several platforms, one with
no runtime of a platform, Xcode listings, result summaries) and plants faults in a copy of the
workflow.

Exit status: 0; 1 when a check or a test failed; 2 on a usage error; 3 when there is nothing to
choose from (no Xcode new enough, no runtime of the platform): the workflow then downloads the
platform (`xcodebuild -downloadPlatform`) and chooses again.
"""
import argparse
import io
import json
import re
import shlex
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from _common import report

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github/workflows/apple.yml"
# Swift tools-version 6.2 (Package.swift) is Xcode 26's.
MINIMUM_XCODE = (26, 0)
NOTHING_TO_CHOOSE = 3


@dataclass(frozen=True)
class Platform:
    simulator: str            # xcodebuild's destination platform
    sdk: str                  # the simulator SDK's `platform` in `xcodebuild -showsdks -json`
    runtime_names: tuple      # a runtime's `platform` / name prefix / identifier word in simctl
    families: tuple           # device families in order of preference (`productFamily`)
    floor: tuple              # the deployment target of Package.swift


PLATFORMS = {
    "iOS": Platform("iOS Simulator", "iphonesimulator", ("iOS",), ("iPhone", "iPad"), (16, 0)),
    "tvOS": Platform("tvOS Simulator", "appletvsimulator", ("tvOS",), ("Apple TV",), (16, 0)),
    "watchOS": Platform("watchOS Simulator", "watchsimulator", ("watchOS",), ("Apple Watch",), (9, 0)),
    # simctl still calls visionOS by its early name in runtime identifiers (SimRuntime.xrOS-26-0).
    "visionOS": Platform("visionOS Simulator", "xrsimulator", ("visionOS", "xrOS"), ("Apple Vision",), (1, 0)),
}


class NothingToChoose(Exception):
    """No Xcode or simulator fits: the message says what there was."""


class BadInput(Exception):
    """The input is not what the command that made it prints."""


def version(text):
    """(major, minor, patch) of "26.0.1", "18.6" or "9"; None when it is no version."""
    if not isinstance(text, str) or not re.fullmatch(r"\d+(\.\d+){0,2}", text.strip()):
        return None
    parts = [int(part) for part in text.strip().split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def shown(numbers):
    return ".".join(str(n) for n in numbers[:2]) + (f".{numbers[2]}" if len(numbers) > 2 and numbers[2] else "")


def read_input(name):
    return sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")


def read_json(name, what):
    try:
        return json.loads(read_input(name))
    except json.JSONDecodeError as error:
        raise BadInput(f"{what}: not JSON ({error})") from None


# --- xcode -------------------------------------------------------------------------------------

def choose_xcode(listing, minimum=MINIMUM_XCODE):
    """The newest released Xcode of `ls /Applications` lines (Xcode_26.1.app, Xcode_26.0.1.app …);
    betas and release candidates (Xcode_26.2_beta.app) and the unversioned Xcode.app link are passed over."""
    found = []
    for line in listing.splitlines():
        name = line.strip().rstrip("/").rsplit("/", 1)[-1]
        match = re.fullmatch(r"Xcode_(\d+(?:\.\d+){0,2})\.app", name)
        if match:
            found.append((version(match.group(1)), name))
    eligible = sorted(entry for entry in found if entry[0] >= minimum + (0,))
    if not eligible:
        have = ", ".join(name for _, name in sorted(found)) or "no released Xcode"
        raise NothingToChoose(f"no released Xcode {shown(minimum)} or later in the listing ({have}); "
                              "the package's tools-version 6.2 needs Xcode 26")
    return eligible[-1][1]


# --- simulator ---------------------------------------------------------------------------------

def runtime_platform(runtime):
    """The platform name (a key of PLATFORMS) a simctl runtime is of, or None."""
    words = [runtime.get("platform", ""), runtime.get("name", "").split(" ")[0]]
    match = re.search(r"SimRuntime\.([A-Za-z]+)-", runtime.get("identifier", ""))
    if match:
        words.append(match.group(1))
    for key, platform in PLATFORMS.items():
        if any(word in platform.runtime_names for word in words):
            return key
    return None


def sdk_version(sdks, platform):
    """The newest simulator SDK version of `platform` in `xcodebuild -showsdks -json`."""
    if not isinstance(sdks, list):
        raise BadInput("xcodebuild -showsdks -json: not a list of SDKs")
    versions = [version(sdk.get("sdkVersion") or sdk.get("platformVersion"))
                for sdk in sdks if isinstance(sdk, dict) and sdk.get("platform") == PLATFORMS[platform].sdk]
    versions = [v for v in versions if v]
    if not versions:
        raise NothingToChoose(f"the selected Xcode has no {PLATFORMS[platform].sdk} SDK "
                              f"(`xcodebuild -downloadPlatform {platform}` installs the platform)")
    return max(versions)


def choose_simulator(simctl, platform, sdk=None):
    """(runtime, device type, existing device or None) of `platform` from `xcrun simctl list -j`."""
    if not isinstance(simctl, dict) or not isinstance(simctl.get("runtimes"), list):
        raise BadInput("xcrun simctl list -j: no \"runtimes\" list")
    info = PLATFORMS[platform]
    runtimes, passed_over = [], []
    for runtime in simctl["runtimes"]:
        if not isinstance(runtime, dict) or runtime_platform(runtime) != platform:
            continue
        number = version(runtime.get("version"))
        label = runtime.get("name") or runtime.get("identifier", "?")
        if not runtime.get("isAvailable", False):
            passed_over.append(f"{label} (unavailable: {runtime.get('availabilityError', 'no reason given')})")
        elif number is None:
            passed_over.append(f"{label} (no version)")
        elif number < info.floor + (0,):
            passed_over.append(f"{label} (below the package's floor {platform} {shown(info.floor)})")
        elif sdk and number[:2] > sdk[:2]:
            passed_over.append(f"{label} (newer than the Xcode's {platform} {shown(sdk)} SDK)")
        else:
            runtimes.append((number, runtime))
    if not runtimes:
        have = "; ".join(passed_over) or "none installed"
        raise NothingToChoose(f"no {platform} simulator runtime to test on ({have}); "
                              f"`xcodebuild -downloadPlatform {platform}` installs one")
    runtime = max(runtimes, key=lambda entry: entry[0])[1]
    families = {t.get("identifier"): t.get("productFamily") for t in simctl.get("devicetypes", []) if isinstance(t, dict)}

    def rank(family):
        return info.families.index(family) if family in info.families else len(info.families)

    devices = [d for d in (simctl.get("devices") or {}).get(runtime["identifier"], [])
               if isinstance(d, dict) and d.get("isAvailable", False) and d.get("udid")]
    if devices:
        device = min(devices, key=lambda d: (rank(families.get(d.get("deviceTypeIdentifier"))), d.get("name", "")))
        kind = {"identifier": device.get("deviceTypeIdentifier", ""), "name": device.get("name", "")}
        return runtime, kind, device
    # No device of the runtime yet (a runtime just downloaded): the type to create, newest of the family.
    supported = [t for t in runtime.get("supportedDeviceTypes") or [] if isinstance(t, dict)
                 and rank(t.get("productFamily") or families.get(t.get("identifier"))) < len(info.families)]
    if not supported:
        raise NothingToChoose(f"{runtime.get('name', runtime['identifier'])} lists no device type of "
                              f"{' or '.join(info.families)} to create a simulator of")
    best = min(rank(t.get("productFamily") or families.get(t.get("identifier"))) for t in supported)
    kind = [t for t in supported if rank(t.get("productFamily") or families.get(t.get("identifier"))) == best][-1]
    return runtime, {"identifier": kind.get("identifier", ""), "name": kind.get("name", "")}, None


def simulator_outputs(simctl, platform, sdks=None):
    runtime, kind, device = choose_simulator(simctl, platform, sdk_version(sdks, platform) if sdks is not None else None)
    return [
        ("runtime", runtime["identifier"]),
        ("runtime_name", runtime.get("name", "")),
        ("device_type", kind["identifier"]),
        ("device_name", device.get("name", "") if device else kind["name"]),
        ("udid", device["udid"] if device else ""),
        ("destination_platform", PLATFORMS[platform].simulator),
    ]


# --- summary -----------------------------------------------------------------------------------

def summarize(summary, platform):
    """(lines, passed) of `xcrun xcresulttool get test-results summary` JSON."""
    if not isinstance(summary, dict):
        raise BadInput("xcresulttool summary: not a JSON object")
    counts = {}
    for key in ("totalTestCount", "passedTests", "failedTests", "skippedTests"):
        if not isinstance(summary.get(key), int):
            raise BadInput(f"xcresulttool summary: no \"{key}\" count")
        counts[key] = summary[key]
    expected = summary.get("expectedFailures", 0) if isinstance(summary.get("expectedFailures"), int) else 0
    result = summary.get("result", "?")
    where = []
    for entry in summary.get("devicesAndConfigurations") or []:
        device = entry.get("device", {}) if isinstance(entry, dict) else {}
        if device.get("deviceName") or device.get("osVersion"):
            where.append(f"{device.get('deviceName', '?')}, {device.get('platform', platform)} {device.get('osVersion', '?')}")
    lines = [f"{platform}{' (' + '; '.join(where) + ')' if where else ''}: {result}, "
             f"{counts['passedTests']} passed, {counts['failedTests']} failed, {counts['skippedTests']} skipped"
             f"{f', {expected} expected failures' if expected else ''} of {counts['totalTestCount']} tests"]
    for failure in summary.get("testFailures") or []:
        if isinstance(failure, dict):
            name = failure.get("testIdentifierString") or failure.get("testName") or "?"
            target = failure.get("targetName")
            text = " ".join(str(failure.get("failureText", "")).split())
            lines.append(f"  failed: {target + '.' if target else ''}{name}: {text}")
    ok = result == "Passed" and counts["failedTests"] == 0 and counts["passedTests"] > 0
    if counts["passedTests"] == 0:
        lines.append("  no test passed: a run that tests nothing proves nothing")
    return lines, ok


# --- the command line --------------------------------------------------------------------------

def parser():
    main = argparse.ArgumentParser(prog="apple_ci.py", description=__doc__.split("\n")[0])
    commands = main.add_subparsers(dest="command", required=True)
    xcode = commands.add_parser("xcode", help="the newest released Xcode of an /Applications listing")
    xcode.add_argument("listing", nargs="?", default="-")
    xcode.add_argument("--directory", default="/Applications")
    simulator = commands.add_parser("simulator", help="a simulator of a platform from `xcrun simctl list -j`")
    simulator.add_argument("simctl", nargs="?", default="-")
    simulator.add_argument("--platform", required=True)
    simulator.add_argument("--sdks", help="`xcodebuild -showsdks -json` of the selected Xcode")
    summary = commands.add_parser("summary", help="the counts of an xcresult test summary")
    summary.add_argument("summary", nargs="?", default="-")
    summary.add_argument("--platform", required=True)
    return main


def run(arguments):
    """Runs one subcommand; returns the exit status."""
    options = parser().parse_args(arguments)
    platform = getattr(options, "platform", None)
    if platform is not None and platform not in PLATFORMS:
        print(f"apple_ci.py: unknown platform {platform!r} (known: {', '.join(PLATFORMS)})", file=sys.stderr)
        return 2
    try:
        if options.command == "xcode":
            print(f"{options.directory.rstrip('/')}/{choose_xcode(read_input(options.listing))}")
        elif options.command == "simulator":
            sdks = read_json(options.sdks, "xcodebuild -showsdks -json") if options.sdks else None
            outputs = simulator_outputs(read_json(options.simctl, "xcrun simctl list -j"), platform, sdks)
            for key, value in outputs:
                print(f"{key}={value}")
            chosen = dict(outputs)
            print(f"{platform}: {chosen['device_name']} on {chosen['runtime_name']} "
                  f"({'device ' + chosen['udid'] if chosen['udid'] else 'to create'})", file=sys.stderr)
        else:
            lines, ok = summarize(read_json(options.summary, "xcresulttool summary"), platform)
            print("\n".join(lines))
            return 0 if ok else 1
    except NothingToChoose as error:
        print(f"apple_ci.py {options.command}: {error}", file=sys.stderr)
        return NOTHING_TO_CHOOSE
    except (BadInput, OSError) as error:
        print(f"apple_ci.py {options.command}: {error}", file=sys.stderr)
        return 1
    return 0


# --- the workflow check ------------------------------------------------------------------------

SHELL_OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "(", ")", "$(", "`"}


def calls_in(text):
    """The argument lists of every `scripts/apple_ci.py` call in a workflow (continued lines joined)."""
    joined = re.sub(r"\\\n\s*", " ", text)
    calls = []
    for line in joined.splitlines():
        if line.lstrip().startswith("#") or "apple_ci.py" not in line:
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            calls.append((line.strip(), None))
            continue
        for index, token in enumerate(tokens):
            if token.endswith("apple_ci.py"):
                arguments = []
                for word in tokens[index + 1:]:
                    if word in SHELL_OPERATORS or set(word) <= set("|&;<>()"):
                        break
                    arguments.append(word)
                calls.append((line.strip(), arguments))
    return calls


def floors_in(manifest):
    """{platform: (major, minor)} of Package.swift's `platforms:` (.iOS(.v16), .visionOS(.v1) …)."""
    return {name: (int(major), int(minor or 0))
            for name, major, minor in re.findall(r"\.(iOS|tvOS|watchOS|visionOS)\(\.v(\d+)(?:_(\d+))?\)", manifest)}


def workflow_problems(text, manifest):
    found = []
    calls = calls_in(text)
    if not calls:
        found.append("the workflow never calls scripts/apple_ci.py")
    for line, arguments in calls:
        if arguments is None:
            found.append(f"unreadable shell line: {line}")
            continue
        errors = io.StringIO()
        try:
            with redirect_stderr(errors), redirect_stdout(io.StringIO()):
                parser().parse_args(arguments)
        except SystemExit:
            message = errors.getvalue().strip().splitlines()
            found.append(f"a call that does not parse ({message[-1] if message else 'usage error'}): {line}")
    matrix = re.findall(r"^\s*platform:\s*\[([^\]]*)\]", text, re.MULTILINE)
    platforms = [name.strip().strip("'\"") for entry in matrix for name in entry.split(",") if name.strip()]
    if set(platforms) != set(PLATFORMS):
        found.append(f"the matrix's platforms {platforms} are not {list(PLATFORMS)}")
    floors = floors_in(manifest)
    for name, info in PLATFORMS.items():
        if floors.get(name) != info.floor:
            found.append(f"{name}: Package.swift's floor {floors.get(name)} is not the floor here {info.floor}")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("#") and re.search(r"Xcode[_-]\d|XCODE_VERSION", line):
            found.append(f"line {number} pins an Xcode (the runner images drop point releases): {line.strip()}")
    return found


# --- self-test ---------------------------------------------------------------------------------

def device_type(name, family, identifier):
    return {"productFamily": family, "name": name, "identifier": f"com.apple.CoreSimulator.SimDeviceType.{identifier}",
            "bundlePath": f"/Library/Developer/CoreSimulator/Profiles/DeviceTypes/{name}.simdevicetype",
            "minRuntimeVersionString": "16.0.0", "maxRuntimeVersionString": "65535.255.255"}


DEVICE_TYPES = [
    device_type("iPhone 16e", "iPhone", "iPhone-16e"),
    device_type("iPhone 17 Pro", "iPhone", "iPhone-17-Pro"),
    device_type("iPad Pro 13-inch (M4)", "iPad", "iPad-Pro-13-inch-M4-8GB"),
    device_type("Apple TV 4K (3rd generation)", "Apple TV", "Apple-TV-4K-3rd-generation-4K"),
    device_type("Apple Watch Series 11 (46mm)", "Apple Watch", "Apple-Watch-Series-11-46mm"),
    device_type("Apple Watch Ultra 3 (49mm)", "Apple Watch", "Apple-Watch-Ultra-3-49mm"),
    device_type("Apple Vision Pro", "Apple Vision", "Apple-Vision-Pro"),
]


def runtime(platform_word, name, number, build, available=True, types=()):
    entry = {"bundlePath": f"/Library/Developer/CoreSimulator/Volumes/{name}/{name}.simruntime",
             "buildversion": build, "platform": platform_word,
             "identifier": f"com.apple.CoreSimulator.SimRuntime.{platform_word}-{number.replace('.', '-')}",
             "version": number, "isInternal": False, "isAvailable": available, "name": name,
             "supportedDeviceTypes": [t for t in DEVICE_TYPES if t["name"] in types]}
    if not available:
        entry["availabilityError"] = "The runtime bundle is missing"
    return entry


def device(name, udid, kind, available=True):
    return {"dataPath": f"/Users/runner/Library/Developer/CoreSimulator/Devices/{udid}/data", "dataPathSize": 0,
            "logPath": f"/Users/runner/Library/Logs/CoreSimulator/{udid}", "udid": udid, "isAvailable": available,
            "deviceTypeIdentifier": f"com.apple.CoreSimulator.SimDeviceType.{kind}", "state": "Shutdown", "name": name}


IPHONES = ("iPhone 16e", "iPhone 17 Pro", "iPad Pro 13-inch (M4)")
WATCHES = ("Apple Watch Series 11 (46mm)", "Apple Watch Ultra 3 (49mm)")
# As `xcrun simctl list -j` prints it on a macOS 15 runner with Xcode 16.4 and 26.0 (trimmed): an
# unavailable runtime, one newer than Xcode 26.0's SDK, a watchOS runtime with no device yet, visionOS
# under its simctl name xrOS.
SIMCTL = {
    "devicetypes": DEVICE_TYPES,
    "runtimes": [
        runtime("iOS", "iOS 18.5", "18.5", "22F77", types=IPHONES),
        runtime("iOS", "iOS 26.0", "26.0", "23A343", types=IPHONES),
        runtime("iOS", "iOS 26.1", "26.1", "23B80", types=IPHONES),
        runtime("iOS", "iOS 26.2", "26.2", "23C5027f", available=False, types=IPHONES),
        runtime("tvOS", "tvOS 26.0", "26.0", "23J352", types=("Apple TV 4K (3rd generation)",)),
        runtime("watchOS", "watchOS 11.5", "11.5", "22T572", types=WATCHES),
        runtime("watchOS", "watchOS 26.0", "26.0", "23R353", types=WATCHES),
        runtime("xrOS", "visionOS 26.0", "26.0", "23M336", types=("Apple Vision Pro",)),
    ],
    "devices": {
        "com.apple.CoreSimulator.SimRuntime.iOS-18-5": [device("iPhone 16e", "A1B2C3D4-0000-4000-8000-000000000185", "iPhone-16e")],
        "com.apple.CoreSimulator.SimRuntime.iOS-26-0": [
            device("iPad Pro 13-inch (M4)", "A1B2C3D4-0000-4000-8000-000000002601", "iPad-Pro-13-inch-M4-8GB"),
            device("iPhone 17 Pro", "A1B2C3D4-0000-4000-8000-000000002602", "iPhone-17-Pro"),
            device("iPhone 16e", "A1B2C3D4-0000-4000-8000-000000002603", "iPhone-16e", available=False),
        ],
        "com.apple.CoreSimulator.SimRuntime.iOS-26-1": [device("iPhone 17 Pro", "A1B2C3D4-0000-4000-8000-000000002611", "iPhone-17-Pro")],
        "com.apple.CoreSimulator.SimRuntime.tvOS-26-0": [
            device("Apple TV 4K (3rd generation)", "B1B2C3D4-0000-4000-8000-000000002600", "Apple-TV-4K-3rd-generation-4K")],
        "com.apple.CoreSimulator.SimRuntime.watchOS-11-5": [
            device("Apple Watch Series 11 (46mm)", "C1B2C3D4-0000-4000-8000-000000001150", "Apple-Watch-Series-11-46mm")],
        "com.apple.CoreSimulator.SimRuntime.xrOS-26-0": [device("Apple Vision Pro", "D1B2C3D4-0000-4000-8000-000000002600", "Apple-Vision-Pro")],
    },
    "pairs": {},
}


def sdk(platform_word, number):
    return {"canonicalName": f"{platform_word}{number}", "displayName": f"SDK {number}", "isBaseSdk": True,
            "platform": platform_word, "platformVersion": number, "productBuildVersion": "23A339",
            "sdkPath": f"/Applications/Xcode_26.0.1.app/Contents/Developer/Platforms/{platform_word}.sdk", "sdkVersion": number}


# `xcodebuild -showsdks -json` of Xcode 26.0.1 (trimmed).
SDKS = [sdk("iphoneos", "26.0"), sdk("iphonesimulator", "26.0"), sdk("appletvsimulator", "26.0"),
        sdk("watchsimulator", "26.0"), sdk("xrsimulator", "26.0"), sdk("macosx", "26.0")]

SUMMARY_PASSED = {
    "title": "Test - swift-cipher-station-Package", "startTime": 1761000000.0, "finishTime": 1761000900.0,
    "environmentDescription": "swift-cipher-station · Built with macOS 15.6", "topInsights": [], "result": "Passed",
    "totalTestCount": 893, "passedTests": 811, "failedTests": 0, "skippedTests": 82, "expectedFailures": 0,
    "statistics": [{"subtitle": "214 test runs", "title": "31 tests ran with dynamic parameters"}],
    "devicesAndConfigurations": [{"device": {"architecture": "arm64", "deviceId": "A1B2C3D4-0000-4000-8000-000000002602",
                                             "deviceName": "iPhone 17 Pro", "modelName": "iPhone 17 Pro", "osBuildNumber": "23A343",
                                             "osVersion": "26.0", "platform": "iOS Simulator"},
                                  "testPlanConfiguration": {"configurationId": "1", "configurationName": "Test Scheme Action"},
                                  "passedTests": 811, "failedTests": 0, "skippedTests": 82, "expectedFailures": 0}],
    "testFailures": [],
}
SUMMARY_FAILED = dict(SUMMARY_PASSED, result="Failed", passedTests=810, failedTests=1, testFailures=[
    {"testName": "roundTripsBothWays()", "targetName": "PQCryptoTests", "testIdentifier": 4,
     "testIdentifierString": "MLKEMInteropTests/roundTripsBothWays()", "failureText": "Expectation failed:\n (a == b)"}])
SUMMARY_EMPTY = dict(SUMMARY_PASSED, totalTestCount=0, passedTests=0, skippedTests=0)


def captured(arguments, stdin=""):
    """(status, stdout, stderr) of `run(arguments)` with `stdin` as standard input."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = run(arguments)
            except SystemExit as exit:
                status = exit.code
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def self_test():
    failures = []

    def expect(what, condition):
        if not condition:
            failures.append(what)

    listing = "Xcode.app\nXcode_16.4.app\nXcode_26.0.1.app\nXcode_26.1.app\nXcode_26.2_beta.app\nXcode_26.10.app\nXcodes.txt\n"
    expect("xcode: newest release, 26.10 after 26.1, beta passed over",
           captured(["xcode"], listing) == (0, "/Applications/Xcode_26.10.app\n", ""))
    expect("xcode: 26.1 over 26.0.1", captured(["xcode"], "Xcode_26.0.1.app\nXcode_26.1.app\nXcode_16.4.app\n")[1]
           == "/Applications/Xcode_26.1.app\n")
    status, _, error = captured(["xcode"], "Xcode.app\nXcode_16.4.app\nXcode_26.1_beta_2.app\n")
    expect(f"xcode: none new enough is a clear error ({status}, {error!r})",
           status == NOTHING_TO_CHOOSE and "no released Xcode 26.0 or later" in error and "Xcode_16.4.app" in error)

    with tempfile.TemporaryDirectory() as folder:
        simctl, sdks = Path(folder) / "simctl.json", Path(folder) / "sdks.json"
        simctl.write_text(json.dumps(SIMCTL, indent=2))
        sdks.write_text(json.dumps(SDKS, indent=2))

        def chosen(platform, *extra, source=None):
            status, out, error = captured(["simulator", "--platform", platform, *extra, str(source or simctl)])
            return status, dict(line.split("=", 1) for line in out.splitlines() if "=" in line), error

        status, values, _ = chosen("iOS", "--sdks", str(sdks))
        expect(f"iOS with Xcode 26.0's SDK: iPhone 17 Pro on iOS 26.0, not 26.1 nor the unavailable 26.2 ({values})",
               status == 0 and values.get("runtime") == "com.apple.CoreSimulator.SimRuntime.iOS-26-0"
               and values.get("udid") == "A1B2C3D4-0000-4000-8000-000000002602"
               and values.get("destination_platform") == "iOS Simulator")
        status, out, _ = captured(["simulator", "--platform", "iOS", "-"], json.dumps(SIMCTL))
        values = dict(line.split("=", 1) for line in out.splitlines())
        expect(f"iOS from standard input without SDKs: iOS 26.1 ({values})",
               status == 0 and values.get("runtime_name") == "iOS 26.1" and values.get("udid", "").endswith("2611"))
        status, values, _ = chosen("tvOS", "--sdks", str(sdks))
        expect(f"tvOS: its one device ({values})", status == 0 and values.get("device_name") == "Apple TV 4K (3rd generation)"
               and values.get("destination_platform") == "tvOS Simulator")
        status, values, error = chosen("watchOS", "--sdks", str(sdks))
        expect(f"watchOS 26.0 has no device: the newest watch type to create ({values}, {error!r})",
               status == 0 and values.get("runtime") == "com.apple.CoreSimulator.SimRuntime.watchOS-26-0"
               and values.get("udid") == "" and values.get("device_type", "").endswith("Apple-Watch-Ultra-3-49mm")
               and "to create" in error)
        status, values, _ = chosen("visionOS", "--sdks", str(sdks))
        expect(f"visionOS found under simctl's xrOS ({values})", status == 0
               and values.get("runtime") == "com.apple.CoreSimulator.SimRuntime.xrOS-26-0"
               and values.get("destination_platform") == "visionOS Simulator")

        without_vision = dict(SIMCTL, runtimes=[r for r in SIMCTL["runtimes"] if r["platform"] != "xrOS"])
        (Path(folder) / "without.json").write_text(json.dumps(without_vision))
        status, values, error = chosen("visionOS", source=Path(folder) / "without.json")
        expect(f"no visionOS runtime: status 3, a clear message, no output ({status}, {error!r})",
               status == NOTHING_TO_CHOOSE and values == {} and "no visionOS simulator runtime" in error
               and "xcodebuild -downloadPlatform visionOS" in error)
        only_old = dict(SIMCTL, runtimes=[runtime("iOS", "iOS 15.5", "15.5", "19F70", types=IPHONES),
                                          runtime("iOS", "iOS 26.2", "26.2", "23C5027f", available=False)])
        (Path(folder) / "old.json").write_text(json.dumps(only_old))
        status, _, error = chosen("iOS", source=Path(folder) / "old.json")
        expect(f"only runtimes below the floor or unavailable: each named ({error!r})", status == NOTHING_TO_CHOOSE
               and "iOS 15.5 (below the package's floor iOS 16.0)" in error and "iOS 26.2 (unavailable" in error)
        status, _, error = chosen("watchOS", "--sdks", str(sdks).replace("sdks", "missing"))
        expect(f"a missing input file is an error, not a choice ({status})", status == 1 and "missing" in error)
        (Path(folder) / "bad.json").write_text("{\"runtimes\": [")
        expect("a truncated simctl list is an error", chosen("iOS", source=Path(folder) / "bad.json")[0] == 1)
        no_sdk = [s for s in SDKS if s["platform"] != "xrsimulator"]
        (Path(folder) / "nosdk.json").write_text(json.dumps(no_sdk))
        status, _, error = chosen("visionOS", "--sdks", str(Path(folder) / "nosdk.json"))
        expect(f"an Xcode without the visionOS simulator SDK ({error!r})", status == NOTHING_TO_CHOOSE and "xrsimulator" in error)
        expect("an unknown platform is a usage error", chosen("macOS")[0] == 2)

    status, out, _ = captured(["summary", "--platform", "iOS"], json.dumps(SUMMARY_PASSED))
    expect(f"summary: counts ({out!r})", status == 0 and
           "iOS (iPhone 17 Pro, iOS Simulator 26.0): Passed, 811 passed, 0 failed, 82 skipped of 893 tests" in out)
    status, out, _ = captured(["summary", "--platform", "iOS"], json.dumps(SUMMARY_FAILED))
    expect(f"summary: a failure fails and is named ({out!r})",
           status == 1 and "failed: PQCryptoTests.MLKEMInteropTests/roundTripsBothWays(): Expectation failed: (a == b)" in out)
    status, out, _ = captured(["summary", "--platform", "tvOS"], json.dumps(SUMMARY_EMPTY))
    expect(f"summary: no test passed fails ({out!r})", status == 1 and "no test passed" in out)
    expect("summary: no counts is an error", captured(["summary", "--platform", "tvOS"], "{\"result\": \"Passed\"}")[0] == 1)

    # The workflow check: the real workflow passes (checked by the no-argument run); planted faults are caught.
    text, manifest = WORKFLOW.read_text(encoding="utf-8"), (ROOT / "Package.swift").read_text(encoding="utf-8")
    expect("the workflow calls apple_ci.py at least three times", len(calls_in(text)) >= 3)
    plants = {
        "an unknown subcommand": text.replace("apple_ci.py summary", "apple_ci.py sumary", 1),
        "an unknown option": text.replace("apple_ci.py simulator --platform", "apple_ci.py simulator --platfrom", 1),
        "a pinned Xcode": text.replace("runs-on: macos-15", "runs-on: macos-15\n    env:\n      DEVELOPER_DIR: /Applications/Xcode_26.0.1.app", 1),
        "a platform missing from the matrix": re.sub(r"(platform:\s*\[)iOS, ", r"\1", text, count=1),
    }
    for what, planted in plants.items():
        expect(f"workflow check: {what} is caught", planted != text and workflow_problems(planted, manifest))
    expect("workflow check: a floor that differs from Package.swift is caught",
           workflow_problems(text, manifest.replace(".watchOS(.v9)", ".watchOS(.v10)")))

    for failure in failures:
        print(f"apple_ci self-test: FAILED: {failure}")
    print(f"apple_ci self-test: {'failed' if failures else 'passed'} ({len(failures)} of the cases wrong; "
          f"Xcode listings, simctl lists of {len(PLATFORMS)} platforms, result summaries, {len(plants) + 1} planted workflow faults)")
    return 1 if failures else 0


def main(arguments):
    if arguments == ["--self-test"]:
        return self_test()
    if not arguments:
        problems = workflow_problems(WORKFLOW.read_text(encoding="utf-8"), (ROOT / "Package.swift").read_text(encoding="utf-8"))
        return report([f"{WORKFLOW.relative_to(ROOT)}: {p}" for p in problems], "apple_ci: the workflow check failed",
                      f"apple_ci: {WORKFLOW.relative_to(ROOT)} calls this script as it parses, tests "
                      f"{', '.join(PLATFORMS)} at Package.swift's floors, pins no Xcode")
    return run(arguments)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
