"""The grading kernel's spec: the kernel ``hardened-grading``, which nbgrader asks for and no Jupyter installs.

``ResilientExecute`` asks for its kernel (``ResilientExecute.kernel_name``, :data:`KERNEL_NAME` by default) through
:class:`GradingKernelSpecManager`. Its command is the launcher (:mod:`hardened_grading.sandbox.command`).
"""

from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from .command import launcher_command

KERNEL_NAME = "hardened-grading"


class GradingKernelSpecManager(KernelSpecManager):
    """Jupyter's kernel specs, and the grading kernel's, which is installed nowhere.

    The grader asks for its kernel (``ResilientExecute.kernel_name``, :data:`KERNEL_NAME` by default) through this
    manager (:meth:`hardened_grading.preprocessors.execute.ResilientExecute.create_kernel_manager`). It is not written
    into any ``share/jupyter/kernels``: JupyterLab's Launcher and kernel menu, which a student uses, never offer it.
    """

    grading_kernel_name = KERNEL_NAME  #: the name the grader asks for (ResilientExecute.kernel_name)

    def get_kernel_spec(self, kernel_name):
        if kernel_name != self.grading_kernel_name:
            return super().get_kernel_spec(kernel_name)
        return self.kernel_spec_class(
            resource_dir=str(Path(__file__).parent),
            argv=[*launcher_command(), "-f", "{connection_file}"],
            display_name="Python 3 (hardened grading sandbox)",
            language="python",
            interrupt_mode="message",  # a signal would reach bwrap, not the kernel
            metadata={"debugger": False},
        )
