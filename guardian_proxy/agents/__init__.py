"""Agents (CDI): agent-step detection, the contextual-integrity instructor, the tool-call guard and
the experience log. See guardian_proxy/data/norms.yaml for the norms table."""

from .experience import ExperienceLog
from .guard import Guard, GuardResult
from .instructor import Guidance, Instructor
from .norms import Norms, default_norms
from .records import RecordModel, default_record_model
from .stage import MODES, AgentStage
from .step import AgentStep
from .step import detect as detect_step

__all__ = ["MODES", "AgentStage", "AgentStep", "ExperienceLog", "Guard", "GuardResult", "Guidance", "Instructor", "Norms", "RecordModel", "default_norms",
           "default_record_model", "detect_step"]
