"""What the check_*.py scripts share: how a check reports its findings and exits."""


def report(findings, failed, passed):
    """Prints each finding, then `failed` when there are any, `passed` otherwise; returns the exit code (1 or 0)."""
    for finding in findings:
        print(finding)
    print(failed if findings else passed)
    return 1 if findings else 0
