console.log("gpu" in navigator, typeof (navigator as any).gpu);
const a = await (navigator as any).gpu?.requestAdapter();
console.log(a?.info ?? a);
