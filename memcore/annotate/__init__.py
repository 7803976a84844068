"""Human evaluation: annotation tasks and labels (labels), and agreement statistics (stats)."""

from memcore.annotate.labels import (
    CURRENT_COLUMNS,
    LABELS,
    TASKS,
    AnnotationItem,
    Annotations,
    AnnotationTask,
    stratified_sample,
    workbench_retriever,
)

__all__ = ["CURRENT_COLUMNS", "LABELS", "TASKS", "AnnotationItem", "AnnotationTask", "Annotations",
           "stratified_sample", "workbench_retriever"]
