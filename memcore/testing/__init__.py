"""Tests shipped with the library, for memcore's own suite and for plugins' test suites.

`memcore.testing.contract` holds the MemorySystem contract (the checks tests/systems/test_system_contract.py
runs for every registered system) as plain functions, so a plugin checks its system the same way:

    from memcore.testing import CHECKS, contract_case, run_contract

    def test_my_system_keeps_the_contract():
        run_contract("my_system")                    # every check; ContractViolation names each failure

    @pytest.mark.parametrize("check", CHECKS)       # or one pytest test per check
    def test_contract(check, tmp_path):
        CHECKS[check](contract_case("my_system", tmp_path))

Nothing here imports pytest, and the library never imports memcore.testing.
"""

from __future__ import annotations

from memcore.testing.contract import (
    CHECKS,
    ContractCase,
    ContractViolation,
    OnlyProtocol,
    contract_case,
    contract_workbench,
    run_contract,
    tiny_conversation,
)

__all__ = ["CHECKS", "ContractCase", "ContractViolation", "OnlyProtocol", "contract_case", "contract_workbench",
           "run_contract", "tiny_conversation"]
